package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.LoraConfig;
import dev.infersim.engine.StartupDelay;
import io.vertx.core.Context;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * vLLM's sleep mode routes ({@code vllm/entrypoints/serve/sleep/api_router.py} at vLLM main
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c; served only with {@code --enable-sleep-mode} and
 * {@code VLLM_SERVER_DEV_MODE=1}): {@code POST /sleep?level=1&mode=abort} pauses scheduling (mode {@code abort},
 * {@code wait} or {@code keep} for the requests in flight, as {@code EngineCore.sleep}); level 1 offloads the weights
 * to host memory and level 2 discards them, both discarding the KV cache (so the prefix cache empties). Requests that
 * arrive meanwhile wait. {@code POST /wake_up} answers once the engine can run again: after copying the weights back
 * over the host link (level 1: the model's weight bytes per GPU over {@link LoraConfig#DEFAULT_HOST_LINK_GBPS} GB/s,
 * the measured H100 PCIe Gen5 rate) or reading them from storage (level 2: the cold start's weight load at
 * {@code --load-bandwidth-gbps}), in model time. {@code GET /is_sleeping} says whether it sleeps.
 */
final class SleepMode {
    private SleepMode() {
    }

    static void mount(Router router, ModelService service) {
        router.post("/sleep").handler(rc -> sleep(rc, service));
        router.post("/wake_up").handler(rc -> wakeUp(rc, service));
        router.get("/is_sleeping").handler(rc -> rc.response().putHeader("content-type", "application/json")
                .end(Json.MAPPER.createObjectNode().put("is_sleeping", service.sleepLevel >= 0).toString()));
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

    private static void sleep(RoutingContext rc, ModelService service) {
        int level;
        String mode = rc.request().getParam("mode", "abort");
        try {
            level = Integer.parseInt(rc.request().getParam("level", "1"));
        } catch (NumberFormatException e) {
            HttpBasics.error(rc, 400, "level: expected an integer, got " + rc.request().getParam("level"), "level");
            return;
        }
        if (!List.of("abort", "wait", "keep").contains(mode)) {
            HttpBasics.error(rc, 400, "mode: expected abort, wait or keep, got " + mode, "mode");
            return;
        }
        service.sleepLevel = Math.max(service.sleepLevel, level);
        CompletableFuture<?>[] done = service.loops.stream().map(l -> l.sleep(mode, level >= 1)).toArray(CompletableFuture[]::new);
        Context context = rc.vertx().getOrCreateContext();
        CompletableFuture.allOf(done).whenComplete((v, e) -> context.runOnContext(x -> rc.response().end()));
    }

    private static void wakeUp(RoutingContext rc, ModelService service) {
        List<String> tags = rc.queryParam("tags");
        int level = service.sleepLevel;
        // vLLM wakes the weights unless the tags name only other memory (kv_cache) or scheduling
        boolean weights = tags.isEmpty() || tags.contains("weights");
        long reload = weights ? reloadNanos(service.options.deployment(), level, service.options.features().loadBandwidthGbps()) : 0;
        service.sleepLevel = -1;
        CompletableFuture<Long>[] done = service.loops.stream().map(l -> l.wakeUp(reload)).toArray(CompletableFuture[]::new);
        Context context = rc.vertx().getOrCreateContext();
        CompletableFuture.allOf(done).whenComplete((v, e) -> {
            long resumeAt = 0;
            for (CompletableFuture<Long> f : done) {
                resumeAt = Math.max(resumeAt, f.join());
            }
            long wallDelayMs = Math.max(0, (service.clock.toWall(resumeAt) - service.clock.wall().nanoTime()) / 1_000_000);
            context.runOnContext(x -> rc.vertx().setTimer(Math.max(1, wallDelayMs), t -> rc.response().end()));
        });
    }
}
