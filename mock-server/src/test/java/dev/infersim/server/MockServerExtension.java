package dev.infersim.server;

import dev.infersim.common.NanoClock;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Mock servers for a test class, registered as a static {@code @RegisterExtension} field: {@link #sharing} starts one
 * server before the class's tests and closes it after them; {@link #start} inside a test starts one that is closed
 * when that test ends (whether it passed or not).
 */
public final class MockServerExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {
    private final Supplier<ServerOptions> shared;
    private MockServer sharedServer;
    private final List<MockServer> perTest = new ArrayList<>();

    private MockServerExtension(Supplier<ServerOptions> shared) {
        this.shared = shared;
    }

    /** One server for every test of the class. */
    static MockServerExtension sharing(Supplier<ServerOptions> options) {
        return new MockServerExtension(options);
    }

    /** Servers that tests start themselves with {@link #start}. */
    public static MockServerExtension perTest() {
        return new MockServerExtension(null);
    }

    /** The shared server. */
    MockServer get() {
        if (sharedServer == null) {
            throw new IllegalStateException("no shared server: create the extension with sharing(...)");
        }
        return sharedServer;
    }

    /** Starts a server that is closed when the current test ends. */
    public MockServer start(ServerOptions options) throws Exception {
        return start(options, NanoClock.SYSTEM);
    }

    /** Starts a server timed by {@code clock} that is closed when the current test ends. */
    public MockServer start(ServerOptions options, NanoClock clock) throws Exception {
        MockServer s = MockServer.start(options, clock).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        perTest.add(s);
        return s;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (shared != null) {
            sharedServer = TestServers.start(shared.get());
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        perTest.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Exception first = null;
        for (MockServer s : perTest) {
            try {
                TestServers.close(s);
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        perTest.clear();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        TestServers.close(sharedServer);
        sharedServer = null;
    }
}
