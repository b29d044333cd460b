package dev.infersim.server.model;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.LoraConfig;
import dev.infersim.engine.StartupDelay;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * vLLM's sleep mode ({@code vllm/entrypoints/serve/sleep/api_router.py} at vLLM main
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c; served only with {@code --enable-sleep-mode} and
 * {@code VLLM_SERVER_DEV_MODE=1}): {@code POST /sleep?level=1&mode=abort} pauses scheduling (mode {@code abort},
 * {@code wait} or {@code keep} for the requests in flight, as {@code EngineCore.sleep}); level 1 offloads the weights
 * to host memory and level 2 discards them, both discarding the KV cache (so the prefix cache empties). Requests that
 * arrive meanwhile wait. {@code POST /wake_up} answers once the engine can run again: after copying the weights back
 * over the host link (level 1: the model's weight bytes per GPU over {@link LoraConfig#DEFAULT_HOST_LINK_GBPS} GB/s,
 * the measured H100 PCIe Gen5 rate) or reading them from storage (level 2: the cold start's weight load at
 * {@code --load-bandwidth-gbps}), in model time. {@code GET /is_sleeping} says whether it sleeps.
 *
 * <p>One state machine per server, awake or asleep at a level, changed by one operation at a time: a sleep or wake-up
 * starts once the one asked before it has taken effect on every engine, so two calls racing from different connections
 * cannot interleave their commands. A sleep while asleep deepens the level (and empties the cache again) without
 * waiting for anything: nothing runs. A wake-up while awake is answered at once. Every call is answered: 200 once its
 * operation took effect, 503 if the engine stopped meanwhile.
 */
public final class SleepMode {
    private final ModelService service;
    /** The level of the sleep the engines are in, or -1 while awake; changed only by the operation in progress. */
    private volatile int level = -1;
    /** The last operation asked; the next one starts once it has taken effect. Guarded by this. */
    private CompletableFuture<?> last = CompletableFuture.completedFuture(null);

    SleepMode(ModelService service) {
        this.service = service;
    }

    /** The level the engines sleep at, or -1 while awake. */
    public int level() {
        return level;
    }

    public boolean isSleeping() {
        return level >= 0;
    }

    /** Model nanoseconds a wake-up from {@code level} takes to bring the weights back. */
    static long reloadNanos(Deployment d, int level, double loadBandwidthGbps) {
        if (level <= 0) {
            return 0;
        }
        if (level >= 2) {
            return StartupDelay.auto(d, loadBandwidthGbps).weightLoadNanos();
        }
        double bytesPerGpu = (double) d.model().totalParams() * d.dtype().bytes() / d.tensorParallelSize();
        return Math.round(bytesPerGpu / LoraConfig.DEFAULT_HOST_LINK_GBPS);
    }

    /** Any thread: puts the engines to sleep at {@code level} in {@code mode}; completes once they all sleep. */
    public CompletableFuture<Void> sleep(int level, String mode) {
        return enqueue(() -> {
            boolean asleep = this.level >= 0;
            // asleep, nothing runs: a sleep in any mode only deepens the level (and empties the cache again)
            String effective = asleep ? "keep" : mode;
            return all(service.loops.stream().map(l -> l.sleep(effective, level >= 1)).toList())
                    .thenRun(() -> this.level = Math.max(this.level, level));
        });
    }

    /**
     * Any thread: wakes the engines (reloading the weights unless {@code weights} is false); completes with the model
     * time they may run again, or at once (with 0) when they are awake.
     */
    public CompletableFuture<Long> wakeUp(boolean weights) {
        return enqueue(() -> {
            if (level < 0) {
                return CompletableFuture.completedFuture(0L);
            }
            long reload = weights ? reloadNanos(service.options.deployment(), level, service.options.features().loadBandwidthGbps()) : 0;
            List<CompletableFuture<Long>> done = service.loops.stream().map(l -> l.wakeUp(reload)).toList();
            return all(done).thenApply(v -> {
                level = -1;
                long resumeAt = 0;
                for (CompletableFuture<Long> f : done) {
                    resumeAt = Math.max(resumeAt, f.join());
                }
                return resumeAt;
            });
        });
    }

    /** Starts {@code operation} once the last one asked has taken effect (or failed). */
    private synchronized <T> CompletableFuture<T> enqueue(Supplier<CompletableFuture<T>> operation) {
        CompletableFuture<T> next = last.handle((v, e) -> null).thenCompose(v -> operation.get());
        last = next;
        return next;
    }

    private static CompletableFuture<Void> all(List<? extends CompletableFuture<?>> futures) {
        return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
    }
}
