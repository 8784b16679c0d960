/*
 * memcap.cpp - an example cushim plugin in C++17 (docs/plugin-sdk.md).
 *
 * Caps single allocations: a call of an allocation API asking for more than 'max_bytes' is not made and
 * fails with an out-of-memory error; the others are counted, their bytes summed and timed. At exit it
 * prints, per API, the calls, the bytes granted and the calls denied.
 *
 *   cushim run --plugin=/path/to/memcap.so:max_bytes=1GiB,slow_ms=5 -- python3 train.py
 *
 * It finds the size parameter of each API through the metadata accessor host->api_param() (never
 * api->params[i]: the host's parameter arrays may have a larger stride than this build's struct), so it
 * needs no CUDA header and works for every allocation API that has a size_t 'bytesize' parameter.
 * State lives in one object per loaded instance; RAII makes a failing init undo what it did.
 */
#include <cushim/cushim.h>
#include <cushim/cushim_io.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

const cushim_option memcap_options[] = {
    {"max_bytes", CUSHIM_OPT_BYTES, "0", "deny a single allocation larger than this (0: no cap)"},
    {"select", CUSHIM_OPT_STRING, "cat:alloc", "the APIs to watch (a selector); those without the size "
                                               "parameter are left alone"},
    {"param", CUSHIM_OPT_STRING, "bytesize", "the name of the size parameter"},
    {"slow_ms", CUSHIM_OPT_DOUBLE, "0", "log calls slower than this many milliseconds (0: never)"},
    {"verbose", CUSHIM_OPT_BOOL, "false", "log every denied call"},
    {nullptr, 0, nullptr, nullptr},
};

const cushim_host *g_host;   // the same table for every plugin; flush() gets only 'self'

// Counters of one API. Hooks run concurrently on any thread: atomics only.
struct ApiStats {
    std::atomic<uint64_t> calls{0}, bytes{0}, denied{0};
};

// Hook groups registered by one instance. If init fails, the destructor removes them and waits until no
// thread runs them any more, so the state they point to can be freed right after.
class HookGroups {
public:
    HookGroups(const cushim_host *h, cushim_plugin *self) : h_(h), self_(self) {}
    HookGroups(const HookGroups &) = delete;
    HookGroups &operator=(const HookGroups &) = delete;
    ~HookGroups()
    {
        for (uint64_t g : groups_)
            h_->hooks_remove(self_, g);
        if (!groups_.empty())
            h_->hooks_sync();
    }
    int add(const cushim_hook_spec &spec)
    {
        uint64_t g = 0;
        int rc = h_->hooks_add(self_, &spec, &g);
        if (rc == CUSHIM_OK)
            groups_.push_back(g);
        return rc;
    }
    // After a successful init the hooks stay until exit (the host stops them before flush).
    void keep() { groups_.clear(); }

private:
    const cushim_host *h_;
    cushim_plugin *self_;
    std::vector<uint64_t> groups_;
};

class MemCap {
public:
    MemCap(const cushim_host *h, cushim_plugin *self)
        : h_(h), self_(self), stats_(h->api_id_limit()), offset_(h->api_id_limit(), -1), hooks_(h, self)
    {
    }

    // Reads the options, finds the size parameter of each selected API, registers one hook per API.
    bool init()
    {
        max_bytes_ = h_->opt_bytes(self_, "max_bytes");
        slow_ns_ = static_cast<uint64_t>(h_->opt_double(self_, "slow_ms") * 1e6);
        verbose_ = h_->opt_bool(self_, "verbose") == 1;
        if (h_->opt_double(self_, "slow_ms") < 0) {
            h_->log(self_, CUSHIM_LOG_ERROR, "slow_ms must not be negative");
            return false;
        }
        if (!error_code("CUDA_ERROR_OUT_OF_MEMORY") || !error_code("cudaErrorMemoryAllocation"))
            return false;

        const std::string sel = h_->opt_string(self_, "select");
        const std::string param = h_->opt_string(self_, "param");
        char why[256] = "";
        int n = h_->api_select(sel.c_str(), nullptr, 0, why, sizeof why);
        if (n <= 0) {
            h_->log(self_, CUSHIM_LOG_ERROR, "select=%s: %s %s", sel.c_str(),
                    n == CUSHIM_EINVAL ? "malformed" : "matches no API", why);
            return false;
        }
        std::vector<uint32_t> ids(static_cast<size_t>(n));
        h_->api_select(sel.c_str(), ids.data(), static_cast<uint32_t>(ids.size()), nullptr, 0);

        unsigned watched = 0;
        for (uint32_t id : ids) {
            const cushim_api_info *api = h_->api_by_id(id);
            if (api == nullptr || id >= offset_.size() ||
                (api->ret_kind != CUSHIM_RET_CURESULT && api->ret_kind != CUSHIM_RET_CUDAERROR))
                continue;
            for (uint32_t i = 0; i < api->nparams; i++) {
                const cushim_param_info *p = h_->api_param(api, i);
                if (p != nullptr && param == p->name && p->kind == CUSHIM_KIND_SCALAR && p->size == sizeof(size_t))
                    offset_[id] = p->offset;
            }
            if (offset_[id] < 0)
                continue;
            cushim_hook_spec spec{};
            spec.size = sizeof spec;
            spec.api_id = id;   // select == nullptr: exactly this API
            spec.pre = &MemCap::pre;
            spec.post = &MemCap::post;
            spec.user = this;
            if (int rc = hooks_.add(spec); rc != CUSHIM_OK) {
                h_->log(self_, CUSHIM_LOG_ERROR, "cannot hook %s (error %d)", api->name, rc);
                return false;
            }
            watched++;
        }
        if (watched == 0) {
            h_->log(self_, CUSHIM_LOG_ERROR, "select=%s: no API with a size_t parameter '%s'", sel.c_str(),
                    param.c_str());
            return false;
        }
        h_->log(self_, CUSHIM_LOG_INFO, "watching %u APIs, max_bytes=%" PRIu64, watched, max_bytes_);
        hooks_.keep();
        return true;
    }

    // At exit, on the program's thread: written with cushim_write_all, so that a stderr pipe with no reader
    // (or a file size limit, when stderr is a file) fails the write instead of ending the program (cushim_io.h).
    void report() const
    {
        std::string text;
        for (size_t id = 0; id < stats_.size(); id++) {
            const ApiStats &s = stats_[id];
            uint64_t calls = s.calls.load(std::memory_order_relaxed);
            if (calls == 0)
                continue;
            const cushim_api_info *api = h_->api_by_id(static_cast<uint32_t>(id));
            char line[512];
            int n = std::snprintf(line, sizeof line,
                                  "memcap: %s calls=%" PRIu64 " bytes=%" PRIu64 " denied=%" PRIu64 "\n",
                                  api ? api->name : "?", calls, s.bytes.load(std::memory_order_relaxed),
                                  s.denied.load(std::memory_order_relaxed));
            if (n > 0)
                text.append(line, std::min(static_cast<size_t>(n), sizeof line - 1));
        }
        std::fflush(stderr);   // what the program left in stderr's buffer comes first
        cushim_write_all(2, text.data(), text.size());
    }

    void reset()
    {
        for (ApiStats &s : stats_) {
            s.calls.store(0, std::memory_order_relaxed);
            s.bytes.store(0, std::memory_order_relaxed);
            s.denied.store(0, std::memory_order_relaxed);
        }
    }

private:
    bool error_code(const char *name)
    {
        uint32_t kind = 0;
        int32_t code = 0;
        if (h_->result_by_name(name, &kind, &code) != CUSHIM_OK ||
            (kind != CUSHIM_RET_CURESULT && kind != CUSHIM_RET_CUDAERROR)) {
            h_->log(self_, CUSHIM_LOG_ERROR, "the host does not know %s", name);
            return false;
        }
        oom_[kind - 1] = code;
        return true;
    }

    uint64_t size_of(const cushim_call *call) const
    {
        size_t v;
        std::memcpy(&v, static_cast<const char *>(call->params) + offset_[call->api_id], sizeof v);
        return v;
    }

    static int pre(cushim_call *call, void *user, uint64_t *slot)
    {
        auto *m = static_cast<MemCap *>(user);
        ApiStats &s = m->stats_[call->api_id];
        s.calls.fetch_add(1, std::memory_order_relaxed);
        uint64_t want = m->size_of(call);
        if (m->max_bytes_ != 0 && want > m->max_bytes_) {
            s.denied.fetch_add(1, std::memory_order_relaxed);
            if (m->verbose_)
                m->h_->log(m->self_, CUSHIM_LOG_INFO, "denied %s of %" PRIu64 " bytes (seq %" PRIu64 ")",
                           call->info->name, want, call->seq);
            return cushim_call_skip(call, m->oom_[call->info->ret_kind - 1]);
        }
        if (m->slow_ns_ != 0)
            *slot = m->h_->now_ns();   // read back by post() of this same call
        return CUSHIM_CONTINUE;
    }

    static void post(cushim_call *call, void *user, uint64_t *slot)
    {
        auto *m = static_cast<MemCap *>(user);
        if (call->flags & CUSHIM_CALL_SKIPPED)
            return;
        if (cushim_call_result(call) == 0)   // CUDA_SUCCESS and cudaSuccess are both 0
            m->stats_[call->api_id].bytes.fetch_add(m->size_of(call), std::memory_order_relaxed);
        if (m->slow_ns_ == 0)
            return;
        uint64_t ns = m->h_->now_ns() - *slot;
        if (ns > m->slow_ns_)
            m->h_->log(m->self_, CUSHIM_LOG_WARN, "%s took %.3f ms", call->info->name, static_cast<double>(ns) / 1e6);
    }

    const cushim_host *h_;
    cushim_plugin *self_;
    std::vector<ApiStats> stats_;     // by API id
    std::vector<int32_t> offset_;     // by API id: offset of the size parameter in the params struct, -1 none
    int32_t oom_[2] = {0, 0};         // by ret_kind - 1
    uint64_t max_bytes_ = 0, slow_ns_ = 0;
    bool verbose_ = false;
    HookGroups hooks_;                // declared last: destroyed first, before the data its hooks use
};

int memcap_init(const cushim_host *host, cushim_plugin *self)
{
    g_host = host;
    std::unique_ptr<MemCap> m(new (std::nothrow) MemCap(host, self));
    if (!m || !m->init())
        return -1;   // ~MemCap: hooks removed and synced, then the state freed
    host->plugin_set_data(self, m.release());
    return 0;
}

void memcap_flush(cushim_plugin *self)
{
    // The hooks never run after flush: the state can go.
    std::unique_ptr<MemCap> m(static_cast<MemCap *>(g_host->plugin_data(self)));
    g_host->plugin_set_data(self, nullptr);
    if (m)
        m->report();
}

void memcap_fork_child(cushim_plugin *self)
{
    if (auto *m = static_cast<MemCap *>(g_host->plugin_data(self)))
        m->reset();   // the child reports its own allocations
}

const cushim_plugin_def memcap_def = {
    sizeof(cushim_plugin_def),
    CUSHIM_ABI_VERSION,
    "memcap",
    "1.0.0",
    "denies allocations above a size, counts and times the others (SDK example in C++)",
    memcap_options,
    memcap_init,
    memcap_flush,
    memcap_fork_child,
};

}  // namespace

CUSHIM_PLUGIN(memcap_def)
