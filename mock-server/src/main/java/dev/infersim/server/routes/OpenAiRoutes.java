package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.api.anthropic.AnthropicMessages;
import dev.infersim.server.api.embeddings.Embeddings;
import dev.infersim.server.api.openai.CompletionExchange;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.api.responses.ResponsesApi;
import dev.infersim.server.config.FaultType;
import dev.infersim.server.engine.LoraAdapters;
import dev.infersim.server.http.Attempts;
import dev.infersim.server.http.ResponseOutputStream;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.model.Choices;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.RequestParser;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The inference routes, as vLLM's OpenAI-compatible server serves them: {@code POST /v1/chat/completions} and
 * {@code /v1/completions}, the translated {@code POST /v1/messages} (Anthropic) and {@code /v1/responses}, or
 * {@code POST /v1/embeddings} alone for a pooling model; {@code GET /v1/models}, {@code POST /tokenize} and
 * {@code /detokenize}. A completion is parsed (on a worker thread when its body is large), admitted (its fault drawn
 * or forced with {@code x-infersim-fault}, room in the waiting queue) and answered by a {@link CompletionExchange}; a request
 * whose {@code model} names a LoRA adapter runs on it. One instance per event loop.
 */
public final class OpenAiRoutes {
    private final Vertx vertx;
    private final ModelService service;
    private final HttpBasics.Shutdown shutdown;
    /** Threads that write responses too large for an event loop. */
    private final WorkerExecutor bodies;
    /** The attempts of each client request answered by the servers of this Vert.x (a fleet's replicas share it). */
    private final Attempts attempts;

    OpenAiRoutes(Vertx vertx, ModelService service, HttpBasics.Shutdown shutdown, WorkerExecutor bodies) {
        this.vertx = vertx;
        this.attempts = Attempts.of(vertx);
        this.service = service;
        this.shutdown = shutdown;
        this.bodies = bodies;
    }

    void mount(Router router, BodyHandler body) {
        if (service.options.features().pooling()) {
            router.post("/v1/embeddings").handler(body).handler(rc -> translated(rc, b -> Embeddings.translate(b, service)));
        } else {
            router.post("/v1/chat/completions").handler(body).handler(rc -> complete(rc, true));
            router.post("/v1/completions").handler(body).handler(rc -> complete(rc, false));
            router.post("/v1/messages").handler(body).handler(rc -> translated(rc, AnthropicMessages::translate));
            router.post("/v1/responses").handler(body).handler(rc -> translated(rc, b -> ResponsesApi.translate(b, service.options.features())));
        }
        router.get("/v1/models").handler(this::models);
        router.post("/tokenize").handler(body).handler(this::tokenize);
        router.post("/detokenize").handler(body).handler(this::detokenize);
    }

    private void complete(RoutingContext rc, boolean chat) {
        countAttempt(rc);
        if (shutdown.closing()) {
            HttpBasics.error(rc, 503, "The server is shutting down", null);
            return;
        }
        withParsed(vertx, rc, bytes -> service.parser.parse(RequestParser.object(bytes), chat), request -> admit(rc, chat, request, Wire.OPENAI));
    }

    /**
     * A request in another API's format (Anthropic Messages, OpenAI Responses): translated into a chat request as vLLM
     * translates it, then admitted like one, the answer translated back by {@code wire}. Errors past the translation
     * take the wire's error format.
     */
    private void translated(RoutingContext rc, Function<ObjectNode, Wire.Translation> translate) {
        countAttempt(rc);
        if (shutdown.closing()) {
            HttpBasics.error(rc, 503, "The server is shutting down", null);
            return;
        }
        withParsed(vertx, rc, bytes -> {
            Wire.Translation t = translate.apply(RequestParser.object(bytes));
            rc.put(HttpBasics.WIRE_KEY, t.wire());
            return new Translated(service.parser.parse(t.request(), t.chat()), t);
        }, p -> admit(rc, p.translation().chat(), p.request(), p.translation().wire()));
    }

    /**
     * Counts this attempt of the client's request ({@link Attempts}), whatever the answer will be, and names its number
     * in the answer's {@code x-infersim-attempt} header and, through the routing context, in the ground truth.
     */
    private void countAttempt(RoutingContext rc) {
        int n = attempts.count(Attempts.key(rc.request().getHeader("x-request-id"), rc.request().path(), rc.body().buffer()),
                System.nanoTime());
        rc.response().putHeader(Attempts.HEADER, Integer.toString(n));
        rc.put(Attempts.HEADER, n);
    }

    private record Translated(CompletionRequest request, Wire.Translation translation) {
    }

    /**
     * Admits a parsed request (faults, queue room), draws its choices' outputs (on a worker thread where they may cost
     * an event loop too much: {@link Choices#drawnOffLoop}) and starts its exchange, answering in {@code wire}'s format.
     */
    private void admit(RoutingContext rc, boolean chat, CompletionRequest request, Wire wire) {
        long seq = service.nextRequestSeq();
        FaultType fault = chooseFault(rc, service, seq);
        if (fault != null && fault.isError()) {
            if (fault == FaultType.RATE_LIMIT) {
                rc.response().putHeader("retry-after", "1"); // as the real queue-full 429 below
            }
            throw faultError(service, fault, chat);
        }
        int sequences = request.prompts().size() * request.n();
        if (sequences > service.options.maxWaitingRequests()) {
            // Never admissible, even to an empty queue: a 429 would have a client honouring Retry-After retry forever.
            throw new ApiException(400, "The request needs " + sequences + " sequences (prompts x n) but the queue holds "
                    + "at most " + service.options.maxWaitingRequests() + " (--max-waiting-requests)", "n");
        }
        String route = rc.request().getHeader(HttpBasics.ROUTE_HEADER);
        String decision = route == null ? null : routeDecision(route);
        int rank = pinnedRank(rc, service);
        if (Choices.drawnOffLoop(service.options, request)) {
            offLoop(vertx, rc, () -> Choices.outputs(service, request, seq), outputs -> start(rc, request, wire, rank, decision, fault, outputs));
        } else {
            start(rc, request, wire, rank, decision, fault, Choices.outputs(service, request, seq));
        }
    }

    /** Starts the exchange of an admitted request whose outputs are drawn; 429 when the waiting queue is full. */
    private void start(RoutingContext rc, CompletionRequest request, Wire wire, int rank, String decision, FaultType fault,
                       Choices.Output[] outputs) {
        if (shutdown.closing()) {
            throw new ApiException(503, "The server is shutting down", null); // it began while the outputs were drawn
        }
        CompletionExchange exchange = new CompletionExchange(service, rank, request, rc.response(), vertx.getOrCreateContext(), bodies,
                rc.get("requestId"), outputs, fault, wire);
        if (decision != null) {
            exchange.routedBy(decision);
        }
        Long received = rc.get(HttpBasics.RECEIVED_KEY);
        if (received != null) {
            Long lateness = rc.get(HttpBasics.RECEIVED_LATENESS_KEY);
            exchange.receivedAt(received, lateness == null ? -1 : lateness);
        }
        Integer attempt = rc.get(Attempts.HEADER);
        if (attempt != null) {
            exchange.attempt(attempt);
        }
        if (!exchange.submit()) {
            rc.response().putHeader("retry-after", "1");
            throw new ApiException(429, "Too many waiting requests: the queue holds at most "
                    + service.options.maxWaitingRequests() + " (--max-waiting-requests)", null);
        }
    }

    /**
     * Parses (and tokenizes) the body with {@code parse}, then passes the result to {@code next} on this event loop;
     * an {@link ApiException} from either is answered as error JSON. A body over {@value ResponseOutputStream#OFF_LOOP_BYTES} bytes
     * is parsed on a worker thread: tokenizing a 15 MiB prompt takes a cold tokenizer seconds, and the other connections
     * of this event loop must not wait for it.
     */
    static <T> void withParsed(Vertx vertx, RoutingContext rc, Function<byte[], T> parse, Consumer<T> next) {
        Buffer body = rc.body().buffer();
        byte[] bytes = body == null ? new byte[0] : body.getBytes();
        if (bytes.length <= ResponseOutputStream.OFF_LOOP_BYTES) {
            HttpBasics.answering(rc, () -> next.accept(parse.apply(bytes)));
            return;
        }
        offLoop(vertx, rc, () -> parse.apply(bytes), next);
    }

    /**
     * Runs {@code work} on a worker thread, then {@code next} with its result on this event loop; an
     * {@link ApiException} from either is answered as error JSON, nothing is answered to a client that left meanwhile.
     */
    static <T> void offLoop(Vertx vertx, RoutingContext rc, Callable<T> work, Consumer<T> next) {
        vertx.executeBlocking(work, false).onComplete(done -> {
            if (rc.response().closed()) {
                return; // the client left meanwhile
            }
            if (done.failed() && !(done.cause() instanceof ApiException)) {
                rc.fail(done.cause());
                return;
            }
            HttpBasics.answering(rc, () -> {
                if (done.failed()) {
                    throw (ApiException) done.cause();
                }
                next.accept(done.result());
            });
        });
    }

    /** vLLM's {@code X-data-parallel-rank} header pins a request to one engine; -1 lets the load balancer pick. */
    static int pinnedRank(RoutingContext rc, ModelService service) {
        String pinned = rc.request().getHeader(HttpBasics.DP_RANK_HEADER);
        if (pinned == null) {
            return -1;
        }
        int ranks = service.loops.size();
        try {
            int rank = Integer.parseInt(pinned.trim());
            if (rank >= 0 && rank < ranks) {
                return rank;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest(HttpBasics.DP_RANK_HEADER, HttpBasics.DP_RANK_HEADER + ": expected a rank from 0 to "
                + (ranks - 1) + ", got '" + pinned + "'");
    }

    /** The front door's decision as the truth log keeps it: a JSON object, re-serialized so the log stays valid JSON. */
    private static String routeDecision(String header) {
        try {
            JsonNode decision = Json.MAPPER.readTree(header);
            if (decision != null && decision.isObject()) {
                return decision.toString();
            }
        } catch (java.io.IOException e) {
            // answered below
        }
        throw ApiException.badRequest(HttpBasics.ROUTE_HEADER, HttpBasics.ROUTE_HEADER + ": expected a JSON object, got " + header);
    }

    static FaultType chooseFault(RoutingContext rc, ModelService service, long seq) {
        String forced = rc.request().getHeader(HttpBasics.FAULT_HEADER);
        if (forced != null) {
            FaultType t = FaultType.byName(forced);
            if (t == null) {
                throw ApiException.badRequest(HttpBasics.FAULT_HEADER, HttpBasics.FAULT_HEADER + ": unknown fault '" + forced + "'");
            }
            return t;
        }
        return service.faults().pickFor(service.options.seed(), seq);
    }

    static ApiException faultError(ModelService service, FaultType fault, boolean chat) {
        return switch (fault) {
            case RATE_LIMIT -> new ApiException(429, "Rate limit reached (injected fault)", null);
            case SERVER_ERROR -> new ApiException(500, "Internal server error (injected fault)", null);
            case SERVICE_UNAVAILABLE -> new ApiException(503, "Service unavailable (injected fault)", null);
            case AUTH -> new ApiException(401, "Unauthorized (injected fault)", null);
            default -> {
                int len = service.capacity.maxModelLen();
                yield ApiException.badRequest(chat ? "messages" : "prompt", "This model's maximum context length is " + len
                        + " tokens. However, you requested " + (len + 1) + " tokens. Please reduce the length of the input (injected fault).");
            }
        };
    }

    private void models(RoutingContext rc) {
        ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
        ArrayNode data = list.putArray("data");
        // vLLM lists one card per served name, each rooted at the one model they all name (its --model path).
        String hfId = service.options.deployment().model().hfId();
        String root = hfId == null ? service.options.deployment().model().name() : hfId;
        for (String name : service.options.servedModelNames()) {
            modelCard(data.addObject(), name, root, null).put("max_model_len", service.capacity.maxModelLen());
        }
        // then one card per LoRA adapter, rooted at its path, its parent the model it adapts
        if (service.loras != null) {
            for (LoraAdapters.Entry e : service.loras.list()) {
                modelCard(data.addObject(), e.adapter().name(), e.path(), e.parent()).putNull("max_model_len");
            }
        }
        HttpBasics.json(rc, list);
    }

    private static ObjectNode modelCard(ObjectNode m, String name, String root, String parent) {
        m.put("id", name).put("object", "model").put("created", System.currentTimeMillis() / 1000).put("owned_by", "vllm")
                .put("root", root).put("parent", parent);
        // vLLM's ModelCard always carries one permission entry with these values; clients that model the OpenAI schema
        // strictly (and gateways that relay the card) expect the list to be there.
        m.putArray("permission").addObject()
                .put("id", "modelperm-" + java.util.UUID.randomUUID().toString().replace("-", ""))
                .put("object", "model_permission").put("created", System.currentTimeMillis() / 1000)
                .put("allow_create_engine", false).put("allow_sampling", true).put("allow_logprobs", true)
                .put("allow_search_indices", false).put("allow_view", true).put("allow_fine_tuning", false)
                .put("organization", "*").putNull("group").put("is_blocking", false);
        return m;
    }

    /** Parsed, tokenized and serialized where {@link #withParsed} puts a body of its size: the answer grows with it. */
    private void tokenize(RoutingContext rc) {
        withParsed(vertx, rc, bytes -> tokenized(bytes).toString(), out -> HttpBasics.jsonText(rc, out));
    }

    private ObjectNode tokenized(byte[] bytes) {
        ObjectNode body = RequestParser.object(bytes);
        service.parser.checkModel(body);
        JsonFields fields = JsonFields.of(body);
        int[] ids;
        if (body.hasNonNull("messages")) {
            ids = service.parser.chatPrompt(body);
        } else {
            String prompt = fields.optString("prompt");
            if (prompt == null) {
                throw ApiException.badRequest("prompt", "prompt: field required (or messages)");
            }
            ids = service.tokenizer.encodePrompt(prompt);
        }
        ObjectNode out = Json.MAPPER.createObjectNode().put("count", ids.length).put("max_model_len", service.capacity.maxModelLen());
        ArrayNode tokens = out.putArray("tokens");
        for (int id : ids) {
            tokens.add(id);
        }
        if (fields.optBool("return_token_strs", false)) {
            ArrayNode strs = out.putArray("token_strs");
            for (int id : ids) {
                strs.add(service.tokenizer.piece(id));
            }
        } else {
            out.putNull("token_strs");
        }
        return out;
    }

    private void detokenize(RoutingContext rc) {
        withParsed(vertx, rc, this::detokenized, out -> HttpBasics.jsonText(rc, out));
    }

    private String detokenized(byte[] bytes) {
        ObjectNode body = RequestParser.object(bytes);
        service.parser.checkModel(body);
        JsonNode tokens = body.get("tokens");
        if (tokens == null || !tokens.isArray()) {
            throw ApiException.badRequest("tokens", "tokens: expected a list of token ids");
        }
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = tokens.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt()) {
                throw ApiException.badRequest("tokens", "tokens: expected integers, got " + JsonFields.describe(t));
            }
            ids[i] = t.asInt();
        }
        String text;
        try {
            text = service.tokenizer.decode(ids);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("tokens", "tokens: " + e.getMessage());
        }
        return Json.MAPPER.createObjectNode().put("prompt", text).toString();
    }
}
