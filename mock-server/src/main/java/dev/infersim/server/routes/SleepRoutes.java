package dev.infersim.server.routes;

import dev.infersim.server.json.Json;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.model.SleepMode;
import io.vertx.core.Context;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

/**
 * The HTTP side of vLLM's sleep mode ({@link SleepMode}, {@code vllm/entrypoints/serve/sleep/api_router.py} at vLLM
 * main 9aaf83ef502fc37bc647f6e474314d48ba36cd1c): {@code POST /sleep?level=1&mode=abort}, {@code POST /wake_up} and
 * {@code GET /is_sleeping}. Every call is answered: 200 once its operation took effect, 503 if the engine stopped
 * meanwhile; a bad {@code level} or {@code mode} is a 400.
 */
final class SleepRoutes {
    private final ModelService service;

    private SleepRoutes(ModelService service) {
        this.service = service;
    }

    static void mount(Router router, ModelService service) {
        SleepRoutes routes = new SleepRoutes(service);
        SleepMode sleep = service.sleepMode;
        router.post("/sleep").handler(routes::sleepRoute);
        router.post("/wake_up").handler(routes::wakeUpRoute);
        router.get("/is_sleeping").handler(rc -> rc.response().putHeader("content-type", "application/json")
                .end(Json.MAPPER.createObjectNode().put("is_sleeping", sleep.isSleeping()).toString()));
    }

    private void sleepRoute(RoutingContext rc) {
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
        Context context = rc.vertx().getOrCreateContext();
        service.sleepMode.sleep(level, mode).whenComplete((v, e) -> context.runOnContext(x -> answer(rc, e)));
    }

    private void wakeUpRoute(RoutingContext rc) {
        List<String> tags = rc.queryParam("tags");
        // vLLM wakes the weights unless the tags name only other memory (kv_cache) or scheduling
        boolean weights = tags.isEmpty() || tags.contains("weights");
        Context context = rc.vertx().getOrCreateContext();
        service.sleepMode.wakeUp(weights).whenComplete((resumeAt, e) -> context.runOnContext(x -> {
            if (e != null) {
                answer(rc, e);
                return;
            }
            long wallDelayMs = Math.max(0, (service.clock.toWall(resumeAt) - service.clock.wall().nanoTime()) / 1_000_000);
            rc.vertx().setTimer(Math.max(1, wallDelayMs), t -> answer(rc, null));
        }));
    }

    private static void answer(RoutingContext rc, Throwable failed) {
        if (failed == null) {
            rc.response().end();
        } else {
            HttpBasics.error(rc, 503, "The engine has stopped", null);
        }
    }
}
