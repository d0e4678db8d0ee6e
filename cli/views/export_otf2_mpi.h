/*
 * export_otf2_mpi.h - the MPI part of scope-export --format otf2: message
 * and collective records beside the regions' Enter/Leave, and the
 * communicator definitions they refer to (export_otf2_mpi.c says what is
 * written and what cannot be). Used by export_otf2.c only; OTF2 builds only.
 */
#ifndef SP_CLI_EXPORT_OTF2_MPI_H
#define SP_CLI_EXPORT_OTF2_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "comm_matrix.h"
#include "view_lanes.h"

/* What one region of the file is, for the MPI records. */
typedef struct otf2_mpi_region {
    uint8_t role;       /* OTF2_MPI_NONE, _SEND, _RECV, _COLL */
    uint8_t op;         /* OTF2_CollectiveOp of a collective */
    uint8_t left_out;   /* why an MPI call gets no record: OTF2_MPI_LEFT_* */
    bool mpi;           /* an MPI region at all (paradigm MPI) */
    bool via_map;       /* peer is a rank of communicator `comm`: placed per rank */
    long long comm;     /* the name's comm handle (via_map) */
    uint32_t peer, tag, root;
    uint64_t bytes;
} otf2_mpi_region;

enum { OTF2_MPI_NONE = 0, OTF2_MPI_SEND, OTF2_MPI_RECV, OTF2_MPI_COLL };
enum { OTF2_MPI_KEPT = 0, OTF2_MPI_LEFT_ANY_SOURCE, OTF2_MPI_LEFT_SENDRECV, OTF2_MPI_LEFT_COMM };

typedef struct otf2_mpi {
    otf2_mpi_region *regions;  /* [region count] */
    bool enabled;              /* the file's ranks are 0..ranks-1, each with a lane */
    uint32_t ranks;
    uint64_t *lane_records;    /* [lane count]: MPI records written on each lane */
    uint64_t any_source, sendrecv, other_comm; /* calls left without a record */
    const view_lanes *lanes;   /* each lane's rank, for the peers placed through maps */
    comm_matrix maps;          /* the file's world-rank maps (only .maps used) */
    /* Communicators other than MPI_COMM_WORLD, one per distinct member list
     * (archive comms 1..sub_comms): map_comm[i] is maps.maps[i]'s (0: an
     * unusable map), sub_comm_map[k - 1] a map listing comm k's members. */
    uint32_t *map_comm;
    size_t *sub_comm_map;
    uint32_t sub_comms;
} otf2_mpi;

/* Decode every region name of v's file and decide whether message records
 * can be written (enabled). Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int otf2_mpi_init(otf2_mpi *m, const view_lanes *v);
void otf2_mpi_free(otf2_mpi *m);

/* The records of a call of `region` on lane `lane`: after its Enter
 * (sends, collective begin) and before its Leave (receives, collective
 * end). Return OTF2_SUCCESS or OTF2's error. */
OTF2_ErrorCode otf2_mpi_after_enter(otf2_mpi *m, OTF2_EvtWriter *w, size_t lane, size_t region,
                                    OTF2_TimeStamp time);
OTF2_ErrorCode otf2_mpi_before_leave(otf2_mpi *m, OTF2_EvtWriter *w, size_t lane, size_t region,
                                     OTF2_TimeStamp time);

/* Paradigm and role of region `region` in its OTF2 Region definition. */
void otf2_mpi_region_kind(const otf2_mpi *m, size_t region, OTF2_Paradigm *paradigm,
                          OTF2_RegionRole *role);

/* The definitions of MPI_COMM_WORLD (comm 0) and of the other
 * communicators collectives ran on (comms 1..sub_comms, groups 2..): strings
 * from *next_string on (advanced), the locations group (per rank, its first
 * lane with MPI records, else its first lane) and each communicator's
 * group. Nothing when !m->enabled. Returns OTF2_SUCCESS or OTF2's error. */
OTF2_ErrorCode otf2_mpi_write_defs(const otf2_mpi *m, const view_lanes *v, OTF2_GlobalDefWriter *g,
                                   OTF2_StringRef *next_string);

#endif /* SP_CLI_EXPORT_OTF2_MPI_H */
