/* shmlink.h - buffers in shared memory between the instances of a run on
 * one host (tusk-run --transport shm).
 *
 * A sender owns one ring: a memfd of `slots` fixed-size slots that its
 * actor writes its output into (the driver's take hands out a slot: the
 * output is written once, in place). A buffer goes down a link as a
 * small ZeroMQ message over the link's ipc socket: the wire header, which
 * keeps every count of the run as it is, and a slot descriptor
 * (runtime/wire.h, tusk_wire_shm_t) in place of the buffer. The receiver
 * maps the ring (the sender's /proc/PID/fd/FD: only a process of the same
 * user may open it; it is checked to be a regular file of ours, of the
 * size its header says, whose nonce is the descriptor's), processes the
 * buffer in place and gives the slot back.
 *
 * Giving back is a credit in the ring itself: every slot has a word of
 * 64 bits, one per link of the sender (the sender sets the bit of a link
 * before it sends the slot there, the receiver clears it when it is done:
 * atomic operations on shared memory, the only words of the ring not
 * encoded byte by byte, and the only ones both sides write). A slot is
 * free when no bit is set and the sender does not hold it. A sender
 * with no free slot waits, as on a full ZeroMQ queue.
 *
 * Nothing leaks when a peer dies:
 *   - the memfd lives as long as a process maps it or holds it open: a
 *     dead sender's buffers still in flight stay readable, and the memory
 *     goes with the last process;
 *   - a receiver declared lost (PEER_LOST) holds nothing more:
 *     tusk_shm_ring_drop_link clears its bit in every slot;
 *   - a receiver that restarts tells, with the first buffer number its
 *     incarnation sees on the link (tusk_shm_map_seen), that every slot
 *     sent on that link with a lower number went to its predecessor (a
 *     link delivers in order): those bits are cleared when the sender
 *     next looks for a slot.
 *
 * Threads: a ring is used by its sender's thread only; a map's release
 * may be called from any thread (ZeroMQ's I/O thread frees a forwarded
 * message), the rest of a map from one thread.
 */
#ifndef TUSK_SHMLINK_H
#define TUSK_SHMLINK_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/wire.h"
#include "tusk/error.h"

#define TUSK_SHM_MAX_LINKS 64u

/* ---- the sender's ring ---- */

typedef struct tusk_shm_ring tusk_shm_ring_t;

/* A ring of `slots` slots of at least `slot_size` bytes each, for
 * `links` links (1..TUSK_SHM_MAX_LINKS). */
int tusk_shm_ring_new(tusk_shm_ring_t **ring, uint32_t slot_size, uint32_t slots, unsigned links, tusk_error_t *err);
/* Unmap and close (receivers that mapped it keep their mapping). */
void tusk_shm_ring_destroy(tusk_shm_ring_t **ring);

/* A free slot, now held by the sender (NULL: none free now). */
uint8_t *tusk_shm_ring_take(tusk_shm_ring_t *ring);
/* Is `data` the start of one of the ring's slots? */
bool tusk_shm_ring_owns(const tusk_shm_ring_t *ring, const void *data);
/* The sender's hold on the slot at `data` ends (sent, or not used). */
void tusk_shm_ring_put(tusk_shm_ring_t *ring, const void *data);
/* The slot at `data` goes to link `link` as its buffer number `seq`: its
 * bit is set and *desc says where it is. */
void tusk_shm_ring_lend(tusk_shm_ring_t *ring, const void *data, unsigned link, uint64_t seq, tusk_wire_shm_t *desc);
/* It did not go after all (the send failed): the bit is cleared. */
void tusk_shm_ring_unlend(tusk_shm_ring_t *ring, const void *data, unsigned link);
/* The receiver of `link` is gone for good: it holds nothing. */
void tusk_shm_ring_drop_link(tusk_shm_ring_t *ring, unsigned link);
/* A new run: every receiver of the last one is done, every slot free
 * (except those the sender holds); the links' first numbers forgotten. */
void tusk_shm_ring_reset(tusk_shm_ring_t *ring);
/* Slots lent to `link` (those its restarted receiver's predecessor held
 * given back first). */
uint32_t tusk_shm_ring_lent(tusk_shm_ring_t *ring, unsigned link);
/* Slots not free (held or lent), for tests and statistics. */
uint32_t tusk_shm_ring_busy(tusk_shm_ring_t *ring);
uint32_t tusk_shm_ring_slots(const tusk_shm_ring_t *ring);
uint32_t tusk_shm_ring_slot_size(const tusk_shm_ring_t *ring);

/* ---- the receiver's map of one sender's ring ---- */

typedef struct tusk_shm_map tusk_shm_map_t;

/* Map the ring that `desc` names (its pid, fd and nonce), for the link
 * it names (a receiver gets a ring's slots on one link only). */
int tusk_shm_map_open(tusk_shm_map_t **map, const tusk_wire_shm_t *desc, tusk_error_t *err);
/* Unmap. Call once no slot of it is in use (no message refers to it). */
void tusk_shm_map_close(tusk_shm_map_t **map);
/* Is `desc` a slot of this map's ring? */
bool tusk_shm_map_is(const tusk_shm_map_t *map, const tusk_wire_shm_t *desc);
/* The bytes of `desc`'s slot holding `size` bytes; TUSK_EINVAL when the
 * slot, size or link does not fit the ring. */
int tusk_shm_map_slot(tusk_shm_map_t *map, const tusk_wire_shm_t *desc, uint32_t size, uint8_t **data,
                      tusk_error_t *err);
/* A buffer numbered `seq` arrived: the first of this process in this run
 * on the link tells the sender where this incarnation began. */
void tusk_shm_map_seen(tusk_shm_map_t *map, uint64_t seq);
/* A new run (the first number is told again). */
void tusk_shm_map_new_run(tusk_shm_map_t *map);
/* Done with the slot at `data`: the sender may use it again. Has
 * zmq_free_fn's signature (hint: the map), so that a ZeroMQ message may
 * hold the slot. */
void tusk_shm_map_release(void *data, void *hint);

#endif
