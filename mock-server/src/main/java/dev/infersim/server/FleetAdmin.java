package dev.infersim.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;

import java.util.List;

/** What {@code GET|POST /admin/replicas} on a fleet's first port reads and changes. */
interface FleetAdmin {
    /** {@code {"replicas", "ready", "loading", "draining", "endpoints": [{"replica", "url", "port", "state"}]}}. */
    ObjectNode describe();

    /** Grows (new replicas cold-start) or shrinks (the highest-numbered replicas drain) the fleet to {@code n}. */
    Future<Void> scaleTo(int n);

    /** The serving replicas' metrics, by index (one per data-parallel engine): the dashboard shows them side by side. */
    List<ServerMetrics> metrics();

    /** Replica {@code index} if the fleet has it now, else null. */
    MockServer replica(int index);

    /** The largest fleet a POST may ask for. */
    int maxReplicas();
}
