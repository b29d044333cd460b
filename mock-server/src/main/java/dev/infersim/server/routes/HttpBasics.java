package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.ReadLateness;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.config.PodIdentity;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.model.ModelService;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.function.IntSupplier;

/**
 * What every route of the HTTP surface shares: the request id and the headers that name who answered, the API key
 * check, the gate that refuses {@code /v1} while the model loads, and OpenAI error JSON (in a translated API's own
 * format once its request was translated). One instance per event loop ({@link HttpApi}); the answer writers are static,
 * as the front door and the sleep routes write the same errors.
 */
public final class HttpBasics {
    /** Whether the server is shutting down (new completions get 503). */
    public interface Shutdown {
        boolean closing();
    }

    public static final String FAULT_HEADER = "x-infersim-fault";
    /** Names the replica that answered, so a test can see how a gateway spread its requests. */
    public static final String REPLICA_HEADER = "x-infersim-replica";
    /** llm-d-inference-sim's headers naming the pod that answered (from POD_NAME, its port, POD_NAMESPACE). */
    public static final String POD_HEADER = "x-inference-pod";
    public static final String PORT_HEADER = "x-inference-port";
    public static final String NAMESPACE_HEADER = "x-inference-namespace";
    /** vLLM's header that routes a request to one data-parallel rank. */
    public static final String DP_RANK_HEADER = "x-data-parallel-rank";
    /** The header that carries the front door's routing decision to the replica, and so to its truth log. */
    public static final String ROUTE_HEADER = "x-infersim-route";
    /** The routing context's key of the wire whose error format a translated request's errors take. */
    static final String WIRE_KEY = "infersim.wire";
    /** The routing context's key of the model time at which the request's head was read (a Long). */
    static final String RECEIVED_KEY = "infersim.received";
    /** The routing context's key of the bound on how long the head waited in the socket before that, wall ns (a Long). */
    static final String RECEIVED_LATENESS_KEY = "infersim.received.lateness";

    private final ModelService service;
    private final String replica;
    /** The port the server listens on, once it does. */
    private final IntSupplier boundPort;

    /** How late this event loop read what reached its sockets ({@link ReadLateness}). */
    private final ReadLateness reads;

    /** {@code reads}: this event loop's read bound, opened on the loop. */
    HttpBasics(ModelService service, IntSupplier boundPort, ReadLateness reads) {
        this.reads = reads;
        this.service = service;
        this.replica = Integer.toString(service.options.replica());
        this.boundPort = boundPort;
    }

    /**
     * Every route first: the request's id ({@code x-request-id} as sent, or one made) for the answer and the exchange,
     * the replica that answers, and llm-d-inference-sim's pod headers where the pod is known.
     */
    void assignRequestId(RoutingContext rc) {
        // first: the request's bytes were just read, nothing parsed yet; and how long they can have waited for the loop
        rc.put(RECEIVED_KEY, service.clock.modelNow());
        rc.put(RECEIVED_LATENESS_KEY, reads.at(System.nanoTime()));
        String id = rc.request().getHeader("x-request-id");
        if (id == null || id.isBlank()) {
            id = service.newRequestId(service.nextRequestSeq());
        }
        rc.put("requestId", id);
        rc.response().putHeader("x-request-id", id).putHeader(REPLICA_HEADER, replica);
        PodIdentity pod = service.options.pod();
        if (pod.name() != null) {
            rc.response().putHeader(POD_HEADER, pod.name()).putHeader(PORT_HEADER,
                    Integer.toString(boundPort.getAsInt()));
        }
        if (pod.namespace() != null) {
            rc.response().putHeader(NAMESPACE_HEADER, pod.namespace());
        }
        rc.next();
    }

    void authenticate(RoutingContext rc) {
        String key = service.options.apiKey();
        if (key != null && !bearerMatches(rc.request().getHeader("authorization"), key)) {
            error(rc, 401, "Unauthorized: missing or wrong API key (send Authorization: Bearer KEY)", null);
            return;
        }
        rc.next();
    }

    /**
     * vLLM's check ({@code AuthenticationMiddleware} in {@code vllm/entrypoints/openai/server_utils.py}): the scheme
     * {@code Bearer} in any case, then the key, compared by digest in constant time so that the answer's timing tells
     * nothing about how much of a guess was right.
     */
    static boolean bearerMatches(String authorization, String key) {
        if (authorization == null) {
            return false;
        }
        int space = authorization.indexOf(' ');
        if (space < 0 || !authorization.substring(0, space).equalsIgnoreCase("bearer")) {
            return false;
        }
        return MessageDigest.isEqual(sha256(authorization.substring(space + 1)), sha256(key));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** A loading vLLM pod serves nothing: every /v1 route answers 503 until the cold start ends. */
    void refuseWhileLoading(RoutingContext rc) {
        if (service.loaded) {
            rc.next();
        } else {
            rc.response().putHeader("retry-after", "1");
            error(rc, 503, loadingMessage(), null);
        }
    }

    String loadingMessage() {
        return "The model is loading (cold start of " + service.options.startupDelay() + " model time); retry later";
    }

    /** Runs {@code handler}, answering an {@link ApiException} it throws as error JSON. */
    static void answering(RoutingContext rc, Runnable handler) {
        try {
            handler.run();
        } catch (ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /** The router's 500: an {@link ApiException} as its own status, anything else as an internal error. */
    static void failed(RoutingContext rc) {
        Throwable f = rc.failure();
        if (f instanceof ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        } else {
            // the cause goes to the log, not to the client: a stack's class names and messages are the server's business
            System.err.println("infersim: internal error answering " + rc.request().method() + " " + rc.request().path() + ": " + f);
            error(rc, 500, "Internal server error", null);
        }
    }

    static void json(RoutingContext rc, ObjectNode body) {
        jsonText(rc, body.toString());
    }

    static void jsonText(RoutingContext rc, String body) {
        rc.response().putHeader("content-type", "application/json").end(body);
    }

    /** Writes {@code {"error":{"message","type","param","code"}}}; if a stream already started, just closes it. */
    public static void error(RoutingContext rc, int status, String message, String param) {
        HttpServerResponse response = rc.response();
        if (response.headWritten()) {
            if (!response.ended()) {
                response.reset();
            }
            return;
        }
        String json = rc.get(WIRE_KEY) instanceof Wire w ? w.error(status, message, param, ApiException.typeOf(status))
                : ApiException.errorJson(status, message, param);
        response.setStatusCode(status).putHeader("content-type", "application/json").end(json);
    }
}
