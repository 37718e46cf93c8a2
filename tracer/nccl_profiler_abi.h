/* nccl_profiler_abi.h — internal to tracer/: NCCL's profiler-plugin contract, versions 4,
 * 5 and 6, declared from scratch for Argus's plugin (nccl_profiler.c), its chaining
 * (nccl_profiler_chain.c) and the tests that play NCCL's side. No NCCL header is needed.
 *
 * What each declaration matches (NCCL sources, src/include/plugin/):
 *   v4 — profiler/profiler_v4.h of NCCL 2.26–2.27: init(ctx, mask, commName, commHash,
 *        nNodes, nranks, rank, logfn); descriptor type is a uint8_t; state args carry
 *        the kernel-channel stop timer.
 *   v5 — profiler/profiler_v5.h of NCCL 2.28: init(ctx, commId, mask, commName, nNodes,
 *        nranks, rank, logfn); descriptor type widened to uint64_t; API events (group,
 *        collective and p2p API calls, kernel launch) added; coll/p2p gain parentGroup.
 *   v6 — profiler/profiler_v6.h of NCCL 2.29: v5's init and state args; the descriptor
 *        union gains the copy-engine (CE) collective/sync/batch events and kernelStep.
 * The symbol NCCL looks up is "ncclProfiler_v<N>", the highest N it knows first, and each
 * lower one after it. Event types and states (nccl_profiler.h there) are one enum shared
 * by all versions. Only the members Argus reads are relied upon; union members after
 * them are declared so that sizes match (NCCL passes pointers, so size only matters for
 * a copy, which the chain makes of the leading members it forwards).
 */
#ifndef ARGUS_TRACER_NCCL_PROFILER_ABI_H
#define ARGUS_TRACER_NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ncclResult_t values used here. */
#define NCCLP_SUCCESS 0
#define NCCLP_INTERNAL_ERROR 3

/* Event types (bit masks: also the activation mask NCCL asks init to fill). */
enum {
    NCCLP_GROUP = 1 << 0,
    NCCLP_COLL = 1 << 1,
    NCCLP_P2P = 1 << 2,
    NCCLP_PROXY_OP = 1 << 3,
    NCCLP_PROXY_STEP = 1 << 4,
    NCCLP_PROXY_CTRL = 1 << 5,
    NCCLP_KERNEL_CH = 1 << 6,
    NCCLP_NET_PLUGIN = 1 << 7,
    NCCLP_GROUP_API = 1 << 8,      /* v5 */
    NCCLP_COLL_API = 1 << 9,       /* v5 */
    NCCLP_P2P_API = 1 << 10,       /* v5 */
    NCCLP_KERNEL_LAUNCH = 1 << 11, /* v5 */
    NCCLP_CE_COLL = 1 << 12,       /* v6 */
    NCCLP_CE_SYNC = 1 << 13,       /* v6 */
    NCCLP_CE_BATCH = 1 << 14,      /* v6 */
};
#define NCCLP_V4_TYPES 0xffu /* the types a v4 plugin can be told about */

/* Event states (recordEventState). */
enum {
    NCCLP_PROXY_OP_IN_PROGRESS = 19,
    NCCLP_STEP_SEND_GPU_WAIT = 8,   /* the GPU has not produced the data yet */
    NCCLP_STEP_SEND_PEER_WAIT = 20, /* waiting for the peer's buffer (credit) */
    NCCLP_STEP_SEND_WAIT = 9,       /* on the wire: waiting for the send to complete */
    NCCLP_STEP_RECV_WAIT = 10,      /* waiting for the peer's data to arrive */
    NCCLP_STEP_RECV_FLUSH_WAIT = 11,/* received, flushing to GPU memory */
    NCCLP_STEP_RECV_GPU_WAIT = 12,  /* the GPU has not consumed the data yet */
    NCCLP_CTRL_IDLE = 13,
    NCCLP_CTRL_APPEND_END = 18,
    NCCLP_NET_UPDATE = 21,
    NCCLP_KERNEL_CH_STOP = 22,
    NCCLP_GROUP_START_API_STOP = 23,
    NCCLP_GROUP_END_API_START = 24,
};

typedef int ncclp_result_t;
typedef int ncclp_state_t;
typedef void (*ncclp_logger_t)(int level, unsigned long flags, const char *file, int line,
                               const char *fmt, ...);

/* The members common to v4, v5 and v6 descriptors (after type/parentObj/rank). */
struct ncclp_coll_v4 {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
};
struct ncclp_p2p_v4 {
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
};
struct ncclp_proxy_op {
    pid_t pid;
    uint8_t channelId;
    int peer;
    int nSteps;
    int chunkSize;
    int isSend;
};
struct ncclp_proxy_step {
    int step;
};
struct ncclp_kernel_ch {
    uint8_t channelId;
    uint64_t pTimer; /* GPU globaltimer at the channel's start */
};
struct ncclp_net_plugin {
    int64_t id;
    void *data;
};

/* ---- v4 ---- */
typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct ncclp_coll_v4 coll;
        struct ncclp_p2p_v4 p2p;
        struct ncclp_proxy_op proxyOp;
        struct ncclp_proxy_step proxyStep;
        struct ncclp_kernel_ch kernelCh;
        struct ncclp_net_plugin netPlugin;
    };
} ncclp_descr_v4;

typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer; /* GPU globaltimer at the channel's stop */
    } kernelCh;
} ncclp_state_args_v4;

typedef struct {
    const char *name;
    ncclp_result_t (*init)(void **context, int *eActivationMask, const char *commName,
                           uint64_t commHash, int nNodes, int nranks, int rank,
                           ncclp_logger_t logfn);
    ncclp_result_t (*startEvent)(void *context, void **eHandle, ncclp_descr_v4 *eDescr);
    ncclp_result_t (*stopEvent)(void *eHandle);
    ncclp_result_t (*recordEventState)(void *eHandle, ncclp_state_t eState,
                                       ncclp_state_args_v4 *eStateArgs);
    ncclp_result_t (*finalize)(void *context);
} ncclp_profiler_v4;

/* ---- v5 and v6 ---- */
struct ncclp_coll_v5 {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
    void *parentGroup;
};
struct ncclp_p2p_v5 {
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void *parentGroup;
};
struct ncclp_api_events {
    union {
        struct {
            bool graphCaptured;
            int groupDepth;
        } groupApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            int root;
            void *stream;
            bool graphCaptured;
        } collApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            void *stream;
            bool graphCaptured;
        } p2pApi;
        struct {
            void *stream;
        } kernelLaunch;
    };
};

typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct ncclp_api_events api; /* groupApi, collApi, p2pApi, kernelLaunch */
        struct ncclp_coll_v5 coll;
        struct ncclp_p2p_v5 p2p;
        struct ncclp_proxy_op proxyOp;
        struct ncclp_proxy_step proxyStep;
        struct ncclp_kernel_ch kernelCh;
        struct ncclp_net_plugin netPlugin;
    };
} ncclp_descr_v5;

/* v6: v5's layout for every v5 member; the union is larger (CE events, kernelStep). */
typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct ncclp_api_events api;
        struct ncclp_coll_v5 coll;
        struct ncclp_p2p_v5 p2p;
        struct ncclp_proxy_op proxyOp;
        struct ncclp_proxy_step proxyStep;
        struct ncclp_kernel_ch kernelCh;
        struct ncclp_net_plugin netPlugin;
        struct {
            uint8_t channelId, isSend, peer;
            uint32_t step, size;
            uint64_t startTs, readyTs;
        } kernelStep;
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            const char *syncStrategy;
            bool intraBatchSync;
            uint32_t batchSize, numBatches, ceSeqNum;
            void *stream;
        } ceColl;
        struct {
            bool isComplete;
            int nRanks;
        } ceCollSync;
        struct {
            int numOps;
            size_t totalBytes;
            bool useIntraSync;
        } ceCollBatch;
    };
} ncclp_descr_v6;

typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
    struct {
        uint64_t pTimer;
    } kernelStep;
} ncclp_state_args_v5; /* v6 uses the same */

typedef struct {
    const char *name;
    ncclp_result_t (*init)(void **context, uint64_t commId, int *eActivationMask,
                           const char *commName, int nNodes, int nranks, int rank,
                           ncclp_logger_t logfn);
    ncclp_result_t (*startEvent)(void *context, void **eHandle, ncclp_descr_v5 *eDescr);
    ncclp_result_t (*stopEvent)(void *eHandle);
    ncclp_result_t (*recordEventState)(void *eHandle, ncclp_state_t eState,
                                       ncclp_state_args_v5 *eStateArgs);
    ncclp_result_t (*finalize)(void *context);
} ncclp_profiler_v5;

typedef struct {
    const char *name;
    ncclp_result_t (*init)(void **context, uint64_t commId, int *eActivationMask,
                           const char *commName, int nNodes, int nranks, int rank,
                           ncclp_logger_t logfn);
    ncclp_result_t (*startEvent)(void *context, void **eHandle, ncclp_descr_v6 *eDescr);
    ncclp_result_t (*stopEvent)(void *eHandle);
    ncclp_result_t (*recordEventState)(void *eHandle, ncclp_state_t eState,
                                       ncclp_state_args_v5 *eStateArgs);
    ncclp_result_t (*finalize)(void *context);
} ncclp_profiler_v6;

#endif /* ARGUS_TRACER_NCCL_PROFILER_ABI_H */
