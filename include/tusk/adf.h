/* adf.h - libtusk-adf, the AGATA Data Flow format: everything in one include. */
#ifndef TUSK_ADF_H
#define TUSK_ADF_H

#include "adf_error.h"
#include "adf_key.h"
#include "adf_reader.h"
#include "adf_writer.h"
#include "adf_file.h"
#include "adf_crystal.h"
#include "adf_psa.h"
#include "adf_tracked.h"
#include "adf_truth.h"
#include "adf_meta.h"
#include "adf_zfinder.h"
#include "adf_sts.h"
#include "adf_ut.h"
#include "adf_tpc.h"

#endif
