/*
 * spp_comm_map.h - each communicator's world ranks, recorded once per
 * communicator as a region of its own (spp_comm_map.c, docs/FORMAT.md
 * 4.6.1), so the tools can place a peer at a world rank.
 *
 * Internal to the pmpi library. Thread-safety: any thread (lock-free).
 */
#ifndef SPP_COMM_MAP_H
#define SPP_COMM_MAP_H

#include <mpi.h>
#include <stdint.h>

/* Maps recorded per process at most; later communicators get none. */
#define SPP_COMM_MAPS 256

/* A call on `comm` (Fortran handle `handle`) is being recorded: its map
 * is recorded when the handle was not seen before. Cost when seen: a
 * probe of a fixed table. */
void spp_comm_map_used(MPI_Comm comm, int32_t handle);

/* `comm` was just created (split, dup, create): its map is recorded, even
 * under a handle seen before (MPI reuses a freed communicator's handle). */
void spp_comm_map_created(MPI_Comm comm);

/* MPI_Comm_free released `handle` (the Fortran handle, taken before the
 * call): its next use is a new communicator's. */
void spp_comm_map_freed(int32_t handle);

/* A new session: no handle counts as seen (MPI_Init, before it starts). */
void spp_comm_map_reset(void);

#endif /* SPP_COMM_MAP_H */
