package dev.infersim.server;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvCapacity;
import io.vertx.core.Context;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** One served model: its engine thread, clock, tokenizer, metrics and the settings its HTTP handlers share. */
final class ModelService {
    final ServerOptions options;
    final ModelClock clock;
    final EngineLoop loop;
    final ServerMetrics metrics;
    final PromptTokenizer tokenizer;
    final LoremVocabulary vocabulary;
    final RequestParser parser;
    final KvCapacity capacity;
    final AtomicReference<FaultSettings> faults;
    final AtomicInteger activeExchanges = new AtomicInteger();
    /** False during the cold start ({@link ServerOptions#startupDelay()}): /health and /v1 answer 503 meanwhile. */
    volatile boolean loaded;
    private final AtomicLong requestSeq = new AtomicLong();
    private final AtomicLong engineIds = new AtomicLong();
    private final ConcurrentHashMap<Context, EventLoopBatch> batches = new ConcurrentHashMap<>();
    private final long idSalt;

    ModelService(ServerOptions options, EngineCore engine, PromptTokenizer tokenizer, LoremVocabulary vocabulary,
                 NanoClock wall) {
        this.options = options;
        this.clock = new ModelClock(options.timeScale(), wall);
        this.capacity = engine.capacity();
        this.metrics = new ServerMetrics(options.servedModelName(), options.deployment(), capacity, options.timeScale());
        this.loop = new EngineLoop(engine, clock, metrics, "infersim-engine-" + options.servedModelName(),
                options.realtimeEngine());
        this.tokenizer = tokenizer;
        this.vocabulary = vocabulary;
        this.parser = new RequestParser(tokenizer, options.servedModelNames(), capacity.maxModelLen(),
                options.schedulingPolicy().equals("priority"));
        this.faults = new AtomicReference<>(options.faults());
        // Replicas of one fleet start in the same millisecond: the index keeps their request ids apart.
        this.idSalt = LoremVocabulary.mix(System.currentTimeMillis() ^ options.seed(), options.replica());
    }

    /** The delivery batch of the calling event loop. */
    EventLoopBatch batchFor(Context context) {
        return batches.computeIfAbsent(context, EventLoopBatch::new);
    }

    /** Sequence number of the next HTTP request (drives derived seeds). */
    long nextRequestSeq() {
        return requestSeq.getAndIncrement();
    }

    long nextEngineId() {
        return engineIds.getAndIncrement();
    }

    /** A 32-hex-digit request id, unique per server run, like vLLM's random_uuid(). */
    String newRequestId(long seq) {
        return String.format("%016x%016x", LoremVocabulary.mix(idSalt, seq), LoremVocabulary.mix(~idSalt, seq));
    }
}
