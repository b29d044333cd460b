package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.ServerMetrics;
import io.vertx.core.Future;

import java.util.List;

/** What {@code GET|POST /admin/replicas} on a fleet's first port reads and changes. */
public interface FleetAdmin {
    /** {@code {"replicas", "ready", "loading", "draining", "endpoints": [{"replica", "url", "port", "state"}]}}. */
    ObjectNode describe();

    /** Grows (new replicas cold-start) or shrinks (the highest-numbered replicas drain) the fleet to {@code n}. */
    Future<Void> scaleTo(int n);

    /** The serving replicas' metrics, by index (one per data-parallel engine): the dashboard shows them side by side. */
    List<ServerMetrics> metrics();

    /** The model served by replica {@code index} if the fleet has it now, else null. */
    ModelService replicaModel(int index);

    /** The largest fleet a POST may ask for. */
    int maxReplicas();

    /** A replica's port could not be listened on (another process has it); the fleet is as it was. */
    final class PortUnavailable extends RuntimeException {
        private final int port;

        public PortUnavailable(int port, Throwable cause) {
            super("port " + port + " is not available (" + String.valueOf(rootMessage(cause)).trim() + ")", cause);
            this.port = port;
        }

        public int port() {
            return port;
        }

        private static String rootMessage(Throwable t) {
            while (t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            return t.getMessage();
        }
    }
}
