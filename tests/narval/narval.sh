# The NARVAL shell commands that start tests/narval/topology.xml's
# sub-system ($1), as NARVAL's "Writing a C actor" page has them: the
# "set library" lines name each generic actor's library. tusk-emulate
# --narval-script reads those and ignores the rest.
launch $1 localhost
set configuration_file topology.xml $1
set action configure $1
set library libnarval_produce.so $1 data_transmitter
set library libnarval_filter.so $1 data_filter
set library libnarval_consume.so $1 data_receiver
set action load $1
set action initialise $1
set action start $1
