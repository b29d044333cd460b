package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.profile.VisionEncoder;
import dev.infersim.server.api.tokens.GenerateAnswer;
import dev.infersim.server.api.tokens.RenderedRequest;
import dev.infersim.server.api.tokens.TokenExchange;
import dev.infersim.server.config.FaultType;
import dev.infersim.server.engine.KvTransferConnector;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.RequestParser;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.List;
import java.util.UUID;

/**
 * The routes of vLLM's tokens-in, tokens-out serving, which routers and disaggregated front ends call
 * ({@code vllm/entrypoints/serve/disagg/} and {@code serve/render/} at vLLM main, fields as its {@code protocol.py}
 * declares them):
 * <ul>
 *   <li>{@code POST /v1/completions/render}, {@code POST /v1/chat/completions/render}: the request as the engine would
 *       get it, nothing generated: vLLM's {@code GenerateRequest} (a JSON array of one per prompt for completions, one
 *       object for chat) with the prompt's {@code token_ids} and the {@code sampling_params} the request resolves to,
 *       {@code max_tokens} included ({@link RenderedRequest});</li>
 *   <li>{@code POST /inference/v1/generate}: a {@code GenerateRequest} run on the engine, answered in token ids
 *       ({@link GenerateAnswer}); what a render returned can be sent as it is;</li>
 *   <li>{@code GET /query}: the bootstrap endpoint of vLLM's MooncakeConnector, which a P/D router asks for a prefill's
 *       engine ids and workers ({@link #mooncakeQuery}).</li>
 * </ul>
 * vLLM mounts {@code /inference/v1/generate} only with {@code --enable-scale-out-disaggregation}; infersim always does,
 * as llm-d-inference-sim. The generate route takes the API key and the loading gate as {@code /v1} does.
 */
final class TokenRoutes {
    /** SamplingParams fields a generate request carries over to the completion it runs as (others are ignored). */
    private static final List<String> SAMPLING_FIELDS = List.of("n", "min_tokens", "seed", "stop", "ignore_eos", "temperature",
            "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty");

    private final Vertx vertx;
    private final ModelService service;
    private final HttpBasics.Shutdown shutdown;
    private final HttpBasics basics;

    TokenRoutes(Vertx vertx, ModelService service, HttpBasics.Shutdown shutdown, HttpBasics basics) {
        this.vertx = vertx;
        this.service = service;
        this.shutdown = shutdown;
        this.basics = basics;
    }

    void mount(Router router, BodyHandler body) {
        router.route("/inference/*").handler(basics::authenticate);
        router.route("/inference/*").handler(basics::refuseWhileLoading);
        if (!service.options.features().pooling()) {
            router.post("/inference/v1/generate").handler(body).handler(this::generate);
            router.post("/v1/completions/render").handler(body).handler(rc -> render(rc, false));
            router.post("/v1/chat/completions/render").handler(body).handler(rc -> render(rc, true));
        }
        router.get("/query").handler(this::mooncakeQuery);
    }

    /** A generate request as parsed: the completion it runs as, and how it is answered. */
    private record Generate(CompletionRequest request, String requestId, boolean stream, boolean includeUsage,
                            boolean continuousUsage, String model) {
    }

    private void generate(RoutingContext rc) {
        if (shutdown.closing()) {
            HttpBasics.error(rc, 503, "The server is shutting down", null);
            return;
        }
        String header = rc.request().getHeader("x-request-id");
        OpenAiRoutes.withParsed(vertx, rc, bytes -> parseGenerate(bytes, header), g -> start(rc, g));
    }

    private void start(RoutingContext rc, Generate g) {
        long seq = service.nextRequestSeq();
        FaultType fault = OpenAiRoutes.chooseFault(rc, service, seq);
        if (fault != null && fault.isError()) {
            throw OpenAiRoutes.faultError(service, fault, false);
        }
        TokenExchange exchange = new TokenExchange(service, g.request(), g.requestId(), seq, vertx.getOrCreateContext(),
                "generate", g.stream());
        GenerateAnswer answer = new GenerateAnswer(rc.response(), g.requestId(), g.model(), exchange.choices(), g.stream(),
                g.includeUsage(), g.continuousUsage());
        if (!exchange.submit(OpenAiRoutes.pinnedRank(rc, service), answer)) {
            rc.response().putHeader("retry-after", "1");
            throw new ApiException(429, "Too many waiting requests: the queue holds at most "
                    + service.options.maxWaitingRequests() + " (--max-waiting-requests)", null);
        }
        rc.response().closeHandler(v -> exchange.cancel());
    }

    /**
     * vLLM's {@code GenerateRequest}: {@code token_ids} (at least one, none negative) and {@code sampling_params} are
     * required; {@code max_tokens} absent means what the context leaves, as vLLM's server-side default; the request id
     * is {@code generate-tokens-} and the {@code x-request-id} header, else the body's {@code request_id}, else a new one.
     */
    private Generate parseGenerate(byte[] bytes, String headerRequestId) {
        ObjectNode in = RequestParser.object(bytes);
        JsonFields fields = JsonFields.of(in);
        JsonNode ids = in.get("token_ids");
        if (ids == null || ids.isNull()) {
            throw ApiException.badRequest("token_ids", "token_ids: Field required");
        }
        if (!ids.isArray() || ids.isEmpty()) {
            throw ApiException.badRequest("token_ids", "token_ids: List should have at least 1 item after validation");
        }
        for (JsonNode id : ids) {
            if (!id.isIntegralNumber()) {
                throw fields.wrongType("token_ids", "a list of integers", ids);
            }
            if (id.asLong() < 0) {
                throw ApiException.badRequest("token_ids", "token_ids must not contain negative values");
            }
        }
        JsonNode sp = in.get("sampling_params");
        if (sp == null || sp.isNull()) {
            throw ApiException.badRequest("sampling_params", "sampling_params: Field required");
        }
        if (!sp.isObject()) {
            throw fields.wrongType("sampling_params", "an object", sp);
        }
        JsonFields sampling = JsonFields.of((ObjectNode) sp);
        Integer n = sampling.optInt("n", 1, Integer.MAX_VALUE);
        int maxNumSeqs = service.options.deployment().maxNumSeqs();
        if (n != null && n > maxNumSeqs) {
            throw ApiException.badRequest("n", "sampling_params.n must be at most the server's max_num_seqs ("
                    + maxNumSeqs + "), got " + n + ".");
        }
        ObjectNode completion = Json.MAPPER.createObjectNode();
        completion.set("prompt", ids);
        JsonNode max = sp.get("max_tokens");
        completion.set("max_tokens", max != null && !max.isNull() ? max
                : Json.MAPPER.getNodeFactory().numberNode(Math.max(1, service.capacity.maxModelLen() - ids.size())));
        for (String key : SAMPLING_FIELDS) {
            if (sp.hasNonNull(key)) {
                completion.set(key, sp.get(key));
            }
        }
        for (String key : new String[] {"model", "priority", KvTransferParams.FIELD}) {
            if (in.hasNonNull(key)) {
                completion.set(key, in.get(key));
            }
        }
        CompletionRequest request = service.parser.parse(completion, false);
        boolean stream = fields.optBool("stream", false);
        boolean includeUsage = false;
        boolean continuousUsage = false;
        JsonNode options = in.get("stream_options");
        if (stream && options != null && options.isObject()) {
            includeUsage = JsonFields.of((ObjectNode) options).optBool("include_usage", false);
            continuousUsage = JsonFields.of((ObjectNode) options).optBool("continuous_usage_stats", false);
        }
        String bodyId = fields.optString("request_id");
        String base = headerRequestId != null ? headerRequestId : bodyId != null ? bodyId : UUID.randomUUID().toString();
        String model = request.lora() != null ? request.lora().name() : service.options.servedModelName();
        return new Generate(request, "generate-tokens-" + base, stream, includeUsage, continuousUsage, model);
    }

    /** {@code /v1/completions/render} (one GenerateRequest per prompt, a list) and {@code /v1/chat/completions/render}. */
    private void render(RoutingContext rc, boolean chat) {
        OpenAiRoutes.withParsed(vertx, rc, bytes -> {
            ObjectNode body = RequestParser.object(bytes);
            CompletionRequest request = service.parser.parse(body, chat);
            if (chat) {
                return RenderedRequest.of(body, request, 0, service.capacity.maxModelLen(), vision(), model()).toString();
            }
            ArrayNode all = Json.MAPPER.createArrayNode();
            for (int p = 0; p < request.prompts().size(); p++) {
                all.add(RenderedRequest.of(body, request, p, service.capacity.maxModelLen(), vision(), model()));
            }
            return all.toString();
        }, out -> HttpBasics.jsonText(rc, out));
    }

    private VisionEncoder vision() {
        return service.options.deployment().model().vision();
    }

    private String model() {
        return service.options.servedModelName();
    }

    /**
     * {@code GET /query}, the MooncakeConnector's bootstrap ({@code MooncakeBootstrapServer.query} in vLLM's
     * {@code mooncake_utils.py}): per data-parallel rank its engine id and its workers by tensor- and pipeline-parallel
     * rank ({@code {"0": {"engine_id": ..., "worker_addr": {"0": {"0": "host:port"}}}}}), served on the HTTP port as
     * llm-d-inference-sim serves it. The engine ids and side-channel addresses are the KV connector's
     * ({@code --kv-transfer-config}), one worker per engine; without a connector there is no prefill topology and the
     * answer is vLLM's 503 for one not ready.
     */
    private void mooncakeQuery(RoutingContext rc) {
        KvTransferConnector kv = service.kvConnector;
        if (kv == null) {
            rc.response().setStatusCode(503).putHeader("content-type", "application/json")
                    .end(Json.MAPPER.createObjectNode().put("detail", "Mooncake prefiller worker topology is not ready.")
                            .toString());
            return;
        }
        ObjectNode ranks = Json.MAPPER.createObjectNode();
        for (int rank = 0; rank < service.loops.size(); rank++) {
            ObjectNode entry = ranks.putObject(Integer.toString(rank)).put("engine_id", kv.engineId(rank));
            entry.putObject("worker_addr").putObject("0").put("0", kv.config().sideChannelHost() + ":" + kv.port(rank));
        }
        HttpBasics.json(rc, ranks);
    }
}
