package dev.infersim.bench.run;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnectOptions;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** A lane's own connections: whatever goes wrong while connecting must end the request, never hang it. */
class LaneConnectionsTest {
    @Test
    void aConnectVertxRefusesUpFrontFailsTheRequestInsteadOfThrowing() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            LaneConnections lane = new LaneConnections(vertx.createHttpClient(),
                    new HttpConnectOptions().setHost("127.0.0.1").setPort(99_999), 2);
            Future<LaneConnections.Connection> acquired = lane.acquire();
            acquired.toCompletionStage().toCompletableFuture().handle((c, t) -> null).get(10, TimeUnit.SECONDS);
            assertTrue(acquired.failed(), "a port Vert.x refuses must fail the acquire, so the request ends");
        } finally {
            vertx.close().await();
        }
    }
}
