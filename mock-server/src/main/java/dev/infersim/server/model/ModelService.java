package dev.infersim.server.model;

import dev.infersim.common.NanoClock;
import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.LoraConfig;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.config.KvEventsConfig;
import dev.infersim.server.config.RuntimeConfig;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.engine.EngineLoop;
import dev.infersim.server.engine.EventLoopBatch;
import dev.infersim.server.engine.KvTransferConnector;
import dev.infersim.server.engine.LoraAdapters;
import dev.infersim.server.engine.ModelClock;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.observe.FakeMetrics;
import dev.infersim.server.observe.LoraRequestStates;
import dev.infersim.server.observe.ServerMetrics;
import dev.infersim.server.request.RequestParser;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;
import io.vertx.core.Context;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** One served model: its engine thread, clock, tokenizer, metrics and the settings its HTTP handlers share. */
public final class ModelService {
    public final ServerOptions options;
    public final ModelClock clock;
    /** The data-parallel engines, by rank; each has its own KV cache, scheduler and metrics. */
    public final List<EngineLoop> loops;
    public final List<ServerMetrics> metrics;
    /** The fake metrics shown (--fake-metrics, /admin/config) and the JSON they were made from; null before any. */
    private volatile FakeView fakeView;
    public final PromptTokenizer tokenizer;
    public final LoremVocabulary vocabulary;
    public final RequestParser parser;
    public final KvCapacity capacity;
    /** What changes at run time ({@code /admin/config}): one immutable value, swapped whole. */
    public final AtomicReference<RuntimeConfig> runtime;
    /** The LoRA adapters served, and the requests on each for vllm:lora_requests_info; both null when LoRA is off. */
    public final LoraAdapters loras;
    public final LoraRequestStates loraStates;
    /** The KV connector (prefill/decode disaggregation); null without {@code --kv-transfer-config}. */
    public final KvTransferConnector kvConnector;
    public final AtomicInteger activeExchanges = new AtomicInteger();
    /** The requests answered in token ids now running, by id (vLLM's gRPC Abort names them). */
    public final TokenRequests tokenRequests = new TokenRequests();
    /** False during the cold start ({@link ServerOptions#startupDelay()}): /health and /v1 answer 503 meanwhile. */
    public volatile boolean loaded;
    /** Sleep and wake-up of the engines, one operation at a time. */
    public final SleepMode sleepMode = new SleepMode(this);
    private final AtomicLong requestSeq = new AtomicLong();
    private final AtomicLong engineIds = new AtomicLong();
    /** One delivery batch per event loop, keyed by the loop's own context (never a request's duplicate of it). */
    private final ConcurrentHashMap<Context, EventLoopBatch> batches = new ConcurrentHashMap<>();
    private final long idSalt;

    public ModelService(ServerOptions options, List<EngineCore> engines, PromptTokenizer tokenizer, LoremVocabulary vocabulary,
                 NanoClock wall) {
        this.options = options;
        this.clock = new ModelClock(options.timeScale(), wall);
        this.capacity = engines.get(0).capacity();
        LoraConfig lora = options.deployment().lora();
        this.loras = lora == null ? null : new LoraAdapters(options.loraModules(), options.servedModelName());
        this.loraStates = lora == null ? null : new LoraRequestStates(lora.maxLoras(), options.metrics().loraByQueue(),
                engines.size(), System::currentTimeMillis);
        this.kvConnector = options.kvTransfer() == null ? null
                : new KvTransferConnector(options, engines.size(), capacity.kvBytesPerTokenPerGpu());
        List<EngineLoop> loops = new ArrayList<>();
        List<ServerMetrics> metrics = new ArrayList<>();
        for (int rank = 0; rank < engines.size(); rank++) {
            ServerMetrics m = new ServerMetrics(options.servedModelName(), options.deployment(), capacity, options.timeScale(), rank);
            String name = "infersim-engine-" + options.servedModelName() + (engines.size() > 1 ? "-dp" + rank : "");
            if (kvConnector != null) {
                engines.get(rank).connectKvTransfer(options.kvTransfer().link(), kvConnector.listener(rank));
            }
            EngineLoop loop = new EngineLoop(engines.get(rank), rank, clock, m, name, options.realtimeEngine(), loraStates,
                    kvConnector);
            if (options.kvEvents() != null) {
                loop.publishKvEvents(options.kvEvents(), engines.size() > 1 ? rank : null, options.replica() * engines.size());
            }
            loops.add(loop);
            metrics.add(m);
        }
        this.loops = List.copyOf(loops);
        if (loras != null) {
            for (LoraAdapters.Entry e : loras.list()) {
                registerLora(e.adapter().id());
            }
        }
        this.metrics = List.copyOf(metrics);
        this.tokenizer = tokenizer;
        this.vocabulary = vocabulary;
        this.parser = new RequestParser(tokenizer, options.servedModelNames(), loras, capacity.maxModelLen(),
                options.schedulingPolicy().equals("priority"), options.features(), options.deployment().model().vision());
        FakeMetrics fake = options.metrics().fake();
        this.runtime = new AtomicReference<>(RuntimeConfig.initial(options, fake == null ? null : fake.toJson()));
        // Replicas of one fleet start in the same millisecond: the index keeps their request ids apart.
        this.idSalt = SplitMix64.valueAt(System.currentTimeMillis() ^ options.seed(), options.replica());
    }

    /**
     * Picks the engine for {@code n} new sequences and reserves their waiting slots there; null when its queue is full
     * (the caller answers 429). {@code pinnedRank} (vLLM's {@code X-data-parallel-rank}) chooses it; -1 picks as vLLM's
     * internal data-parallel load balancer does ({@code DPLBAsyncMPClient.get_core_engine_for_request}): the lowest
     * {@code waiting x 4 + running}, ties to the lowest rank. vLLM scores counts its coordinator published up to 100 ms
     * earlier plus the requests it sent since; here each engine's counts are exact. Picking and reserving hold one lock
     * so two event loops cannot both take the engine that was least loaded before either reserved.
     */
    public EngineLoop reserveEngine(int pinnedRank, int n) {
        int max = options.maxWaitingRequests();
        if (loops.size() == 1 || pinnedRank >= 0) {
            EngineLoop loop = loops.get(Math.max(0, pinnedRank));
            return loop.reserve(n, max) ? loop : null;
        }
        synchronized (loops) {
            EngineLoop best = loops.get(0);
            long bestScore = Long.MAX_VALUE;
            for (EngineLoop loop : loops) {
                long score = 4L * loop.unscheduled() + loop.scheduled();
                if (score < bestScore) {
                    bestScore = score;
                    best = loop;
                }
            }
            return best.reserve(n, max) ? best : null;
        }
    }

    /** Names the KV events of every engine after the port the server listens on ({@link KvEventsConfig#topicFor}). */
    public void listening(int port) {
        if (options.kvEvents() != null) {
            String topic = options.kvEvents().topicFor(options.pod().ip(), options.host(), port, options.servedModelName());
            for (EngineLoop loop : loops) {
                loop.kvEventsTopic(topic);
            }
        }
    }

    /** Every engine reads a newly served adapter into its host cache, as vLLM's add_lora does. */
    public void registerLora(int id) {
        for (EngineLoop loop : loops) {
            loop.registerLora(id);
        }
    }

    /** The fault settings in force. */
    public FaultSettings faults() {
        return runtime.get().faults();
    }

    /**
     * Validates {@code update} whole, swaps the settings in one step and hands the engines their new timing (each
     * applies it between two steps); returns the settings before and after. A bad field throws an {@link ApiException}
     * and changes nothing.
     */
    public RuntimeConfig[] reconfigure(com.fasterxml.jackson.databind.node.ObjectNode update, List<String> allowed) {
        while (true) {
            RuntimeConfig before = runtime.get();
            RuntimeConfig after = before.apply(update, allowed);
            if (runtime.compareAndSet(before, after)) {
                if (after.speedFactor() != before.speedFactor() || after.fixedTiming() != before.fixedTiming()) {
                    for (EngineLoop loop : loops) {
                        loop.changeTiming(after.speedFactor(), after.fixedTiming());
                    }
                }
                return new RuntimeConfig[] {before, after};
            }
        }
    }

    /** The engines' metrics, or the fake ones in force ({@code --fake-metrics}, {@code /admin/config}). */
    public List<ServerMetrics> shownMetrics() {
        com.fasterxml.jackson.databind.node.ObjectNode fake = runtime.get().fakeMetrics();
        if (fake == null) {
            return metrics;
        }
        FakeView view = fakeView;
        if (view == null || view.json() != fake) {
            ServerMetrics m = new ServerMetrics(options.servedModelName(), options.deployment(), capacity, options.timeScale(), 0);
            m.applyFake(FakeMetrics.parse(fake.toString()));
            view = new FakeView(fake, List.of(m));
            fakeView = view;
        }
        return view.metrics();
    }

    /** Fake metrics made from {@code json}. */
    private record FakeView(com.fasterxml.jackson.databind.node.ObjectNode json, List<ServerMetrics> metrics) {
    }

    /** Whether an engine has stopped ({@link EngineLoop#deathCause}). */
    public boolean engineStopped() {
        for (EngineLoop loop : loops) {
            if (loop.deathCause() != null) {
                return true;
            }
        }
        return false;
    }

    public int running() {
        int n = 0;
        for (ServerMetrics m : metrics) {
            n += m.running();
        }
        return n;
    }

    public int waiting() {
        int n = 0;
        for (ServerMetrics m : metrics) {
            n += m.waiting();
        }
        return n;
    }

    /**
     * The delivery batch of the event loop that runs {@code context}. Vert.x gives each HTTP request a duplicate of its
     * loop's context; keyed by those, the map kept a batch (and its two choice arrays) for every request ever served.
     */
    public EventLoopBatch batchFor(Context context) {
        return batches.computeIfAbsent(((ContextInternal) context).unwrap(), EventLoopBatch::new);
    }

    /** Sequence number of the next HTTP request (drives derived seeds). */
    public long nextRequestSeq() {
        return requestSeq.getAndIncrement();
    }

    long nextEngineId() {
        return engineIds.getAndIncrement();
    }

    /** A 32-hex-digit request id, unique per server run, like vLLM's random_uuid(). */
    public String newRequestId(long seq) {
        return String.format("%016x%016x", SplitMix64.valueAt(idSalt, seq), SplitMix64.valueAt(~idSalt, seq));
    }
}
