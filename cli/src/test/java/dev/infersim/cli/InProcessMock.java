package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.concurrent.TimeUnit;

/**
 * One in-process mock for a test class: Llama 3.1 8B on an H100 with vLLM's defaults, 10x faster than real time, with
 * vLLM's development routes ({@code VLLM_SERVER_DEV_MODE=1}: {@code /reset_prefix_cache}) mounted.
 */
final class InProcessMock implements BeforeAllCallback, AfterAllCallback {
    private MockServer server;

    MockServer server() {
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(10).eventLoops(1).devMode(true).build())
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
