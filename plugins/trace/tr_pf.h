/*
 * tr_pf.h - Perfetto's protobuf trace format (a stream of TracePacket, field 1
 * of message Trace), encoded by hand from Perfetto's published .proto field
 * numbers: the writer's events, each given as the one JSON object the JSON
 * format writes (tr_writer.c, tr_wevents.c), become TrackDescriptor and
 * TrackEvent packets. Event names, categories, annotation names and short
 * string values are interned (InternedData, sequence_flags). Host-free; the
 * writer thread only.
 */
#ifndef TR_PF_H
#define TR_PF_H

#include <stddef.h>
#include <stdint.h>

#include "tr_json.h"
#include "tr_pfev.h"

/* The packet sequence the file's packets carry (trusted_packet_sequence_id). */
#define TR_PF_SEQ_ID 1u
/* The process descriptor's label that says the process's start time (/proc/self/stat's starttime: the writer
   knows its own file from before an exec by it, tr_writer.c) */
#define TR_PF_START_LABEL "cushim start="
/* Interned entries kept before the sequence's incremental state is cleared and interning starts again (each
   table; the bytes of the strings are bounded as well: TR_PF_INTERN_BYTES). */
#define TR_PF_INTERN_MAX (1u << 16)
#define TR_PF_INTERN_BYTES (16u << 20)
/* String values interned when at most this long (result names, enums); longer ones are written inline. */
#define TR_PF_ISTR_MAX 64u

typedef struct tr_pf_tab {   /* string -> iid, open addressing */
    char **key;
    uint32_t *len;
    uint64_t *iid;
    uint32_t cap, n;
} tr_pf_tab;

typedef struct tr_pf {
    tr_sb out;                       /* packets ready for the file                                    */
    tr_sb ev, in, tmp, ann, pk;      /* scratch: a TrackEvent, its InternedData, an annotation...      */
    tr_sb pend;                      /* a complete ('X') event held until the next: its flow event follows */
    tr_pf_ev pend_ev;                /* ... read (spans into 'pend')                                    */
    uint64_t pend_flow;              /* flow id of an 's' ('f': terminating) event of the held one      */
    int pend_flow_kind;              /* 0 none, 's' or 'f'                                            */
    tr_pf_tab names, cats, anames, svals;
    uint64_t intern_bytes;
    int cleared;                     /* the next packet says SEQ_INCREMENTAL_STATE_CLEARED             */
    uint64_t *tracks;                /* track uuids described (open addressing; 0 empty)               */
    uint32_t tracks_cap, ntracks;
    int pid;
    uint64_t t_last;                 /* the latest event time (metadata events are put there) */
    uint64_t resets;                 /* times the interning tables were cleared                       */
} tr_pf;

/* Track uuids: a thread's (or a GPU stream's, by its track id in the JSON), the process's, an async range's.
   Small numbers (a uuid is a varint in every event): the id shifted by 2, its kind in the low bits. */
#define TR_PF_UUID_THREAD(tid) (((uint64_t)(tid) << 2) | 1u)
#define TR_PF_UUID_PROC(pid) (((uint64_t)(uint32_t)(pid) << 2) | 2u)
#define TR_PF_UUID_ASYNC(id) (((uint64_t)(id) << 2) | 3u)

/* Starts a stream for process 'pid': the first packet (a clock snapshot of CLOCK_MONOTONIC, the clock of the
   events, and CLOCK_BOOTTIME; the sequence's defaults) into pf->out. 'mono_ns', 'boot_ns': the two clocks read at
   one moment. 0, or -1 (no memory). */
int tr_pf_start(tr_pf *pf, int pid, uint64_t mono_ns, uint64_t boot_ns);
/* One event, as the JSON format's object text: its packets appended to pf->out (an 'X' event is held until the
   next event or tr_pf_end, which may be its flow's 's' or 'f'). 0, or -1 (not an event this writer makes, or no
   memory: nothing appended for it). */
int tr_pf_event(tr_pf *pf, const char *json, size_t n);
/* Writes what is held (the end of the file, a fork). */
void tr_pf_end(tr_pf *pf);
void tr_pf_free(tr_pf *pf);

/* Encoder primitives (also for the tests). */
void tr_pf_varint(tr_sb *sb, uint64_t v);
void tr_pf_tag(tr_sb *sb, uint32_t field, uint32_t wire);
void tr_pf_bytes(tr_sb *sb, uint32_t field, const void *p, size_t n);
void tr_pf_uint(tr_sb *sb, uint32_t field, uint64_t v);

#endif /* TR_PF_H */
