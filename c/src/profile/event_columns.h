/*
 * event_columns.h - the names of the per-call columns of a profile.
 *
 * Which columns a profile carries is part of the in-memory model (the
 * recorder says "this run has call ids and thread ids", the reader says
 * what a file had, merge takes the union); how each column is stored, its
 * dataset name, element type and missing value, is the layout table's
 * business (format/schema.c, indexed by this enum).
 */
#ifndef SPI_EVENT_COLUMNS_H
#define SPI_EVENT_COLUMNS_H

/* events columns (FORMAT.md 1.5 and 3.1). */
typedef enum spi_event_col {
    SPI_EV_START_DELTAS,  /* schema 3 */
    SPI_EV_DURATIONS,     /* schema 3 */
    SPI_EV_GPU_DURATIONS,
    SPI_EV_CALL_IDS,
    SPI_EV_PARENT_IDS,
    SPI_EV_THREAD_IDS,
    SPI_EV_TASK_IDS,
    SPI_EV_AWAIT_NS,
    SPI_EV_START_TIMES,   /* schema 2 (absolute) */
    SPI_EV_END_TIMES,     /* schema 2 (absolute) */
    SPI_EV_COUNT
} spi_event_col;

/* Bit for an event column in a set of columns (writer layouts, reader
 * "present" masks). */
#define SPI_EV_BIT(col) (1u << (col))

#endif /* SPI_EVENT_COLUMNS_H */
