/* export.h - which functions a tusk library exports.
 *
 * The libraries are compiled with -fvisibility=hidden (configure.ac's
 * VISIBILITY_CFLAGS, Makefile.am's LIB_CFLAGS): a function is visible
 * outside its shared object only when its declaration says so.
 *
 *   TUSK_API       the library's interface: declared in an installed
 *                  header (include/tusk/), kept compatible as the
 *                  library's -version-info says (Makefile.am).
 *   TUSK_INTERNAL  shared between tusk's own libraries, tools and tests
 *                  only: declared in a header next to the library's
 *                  sources, which is never installed (base/textfile.h,
 *                  runtime/wire.h, detector/grid.h, ...). Exported
 *                  because a caller sits in another shared object (a
 *                  higher layer, a tool, a test linking the installed
 *                  library as it ships); no compatibility promise.
 *
 * Everything else is private to its library. tests/interface.sh checks
 * the result on the built libraries: every exported symbol is declared
 * TUSK_API in an installed header or TUSK_INTERNAL in one that is not,
 * and no installed header says TUSK_INTERNAL.
 *
 * Actor libraries export their hooks by name instead (actor.h; Makefile.am
 * links them with -export-symbols-regex). */
#ifndef TUSK_EXPORT_H
#define TUSK_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define TUSK_API __attribute__((visibility("default")))
#else
#define TUSK_API
#endif

#define TUSK_INTERNAL TUSK_API

#endif
