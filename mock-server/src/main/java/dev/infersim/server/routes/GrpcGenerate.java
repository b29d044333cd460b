package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.api.embeddings.Embeddings;
import dev.infersim.server.api.tokens.GenerateAnswer;
import dev.infersim.server.api.tokens.TokenExchange;
import dev.infersim.server.config.FaultType;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.grpc.EmbedRequest;
import dev.infersim.server.grpc.EmbedResponse;
import dev.infersim.server.grpc.GenerateComplete;
import dev.infersim.server.grpc.GenerateRequest;
import dev.infersim.server.grpc.GenerateResponse;
import dev.infersim.server.grpc.GenerateStreamChunk;
import dev.infersim.server.grpc.SamplingParams;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.request.CompletionRequest;
import io.vertx.core.Vertx;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * vLLM's gRPC {@code Generate} and {@code Embed} ({@code smg_grpc_servicer/vllm/servicer.py} at
 * {@code smg-project/smg@f8daa88}) on the engine. A {@code GenerateRequest} is read as the completions request it
 * stands for (token ids or a text prompt; {@code max_tokens} absent means what the context leaves, as vLLM's
 * {@code SamplingParams(max_tokens=None)}; the sampling fields vLLM would check are checked as on HTTP), its
 * {@code request_id} the request's id throughout (the truth log's {@code request_id}; empty: one the server makes), and
 * answered as vLLM's servicer answers it:
 * <ul>
 *   <li>{@code stream}: per output, a {@code chunk} with the token ids generated since its last one (vLLM's DELTA
 *       outputs, several engine steps merged when the client reads slower than the engine generates), and when it
 *       finishes a {@code complete} that repeats the last chunk's ids with the finish reason, as vLLM's servicer
 *       does;</li>
 *   <li>otherwise: once every output has finished, one {@code complete} per output with all its ids.</li>
 * </ul>
 * Errors are gRPC statuses: a request vLLM refuses is INVALID_ARGUMENT with the message HTTP would give, a full
 * queue RESOURCE_EXHAUSTED, an injected error fault its status's counterpart (stream faults do not apply to gRPC). A
 * client that cancels the call aborts it in the engine. Not answered: logprobs, structured-output constraints (accepted
 * and ignored), {@code stop_token_ids}.
 */
final class GrpcGenerate {
    private final ModelService service;

    GrpcGenerate(ModelService service) {
        this.service = service;
    }

    void generate(GrpcServerRequest<GenerateRequest, GenerateResponse> call) {
        call.last().onSuccess(in -> {
            service.tokenRequests.received();
            long seq = service.nextRequestSeq();
            String requestId = in.getRequestId().isEmpty() ? service.newRequestId(seq) : in.getRequestId();
            try {
                refuseErrorFault(seq);
                CompletionRequest request = service.parser.parse(completion(in), false);
                int rank = in.hasDataParallelRank() ? in.getDataParallelRank() : -1;
                if (rank >= service.loops.size() || rank < -1) {
                    throw ApiException.badRequest(null, "data_parallel_rank " + rank + " is out of range [0, "
                            + service.loops.size() + ")");
                }
                TokenExchange exchange = new TokenExchange(service, request, requestId, seq, Vertx.currentContext(), "grpc",
                        in.getStream());
                call.errorHandler(e -> exchange.cancel());
                call.exceptionHandler(e -> exchange.cancel());
                if (!exchange.submit(rank, new Writer(call.response(), in.getStream(), exchange.choices()))) {
                    VllmGrpcService.fail(call.response(), GrpcStatus.RESOURCE_EXHAUSTED, "Too many waiting requests: the "
                            + "queue holds at most " + service.options.maxWaitingRequests() + " (--max-waiting-requests)");
                }
            } catch (ApiException e) {
                VllmGrpcService.fail(call.response(), status(e.status), e.getMessage());
            }
        });
    }

    /**
     * {@code Embed}, for a pooling model ({@code serve --runner pooling}): the prompt runs on the engine as an
     * embeddings request does (prefill only) and the answer is {@link Embeddings#vector} of its ids. A generative model
     * refuses it with INVALID_ARGUMENT, as vLLM's encode does.
     */
    void embed(GrpcServerRequest<EmbedRequest, EmbedResponse> call) {
        call.last().onSuccess(in -> {
            service.tokenRequests.received();
            if (!service.options.features().pooling()) {
                VllmGrpcService.fail(call.response(), GrpcStatus.INVALID_ARGUMENT, "The model does not support the embed "
                        + "task (serve it with --runner pooling)");
                return;
            }
            long seq = service.nextRequestSeq();
            String requestId = in.getRequestId().isEmpty() ? service.newRequestId(seq) : in.getRequestId();
            try {
                if (!in.hasTokenized()) {
                    throw ApiException.badRequest(null, "EmbedRequest requires tokenized input");
                }
                int[] prompt = ids(in.getTokenized().getInputIdsList());
                ObjectNode body = Json.MAPPER.createObjectNode().put("max_tokens", 1).put("ignore_eos", true);
                putIds(body.putArray("prompt"), in.getTokenized().getInputIdsList());
                CompletionRequest request = service.parser.parse(body, false);
                TokenExchange exchange = new TokenExchange(service, request, requestId, seq, Vertx.currentContext(), "grpc",
                        false);
                call.errorHandler(e -> exchange.cancel());
                int dimensions = service.options.deployment().model().hiddenSize();
                TokenExchange.Writer answer = new TokenExchange.Writer() {
                    @Override
                    public void tokens(Choice c, int from, int to, boolean finished) {
                    }

                    @Override
                    public void done() {
                        EmbedResponse.Builder out = EmbedResponse.newBuilder().setPromptTokens(prompt.length)
                                .setEmbeddingDim(dimensions);
                        for (float v : Embeddings.vector(prompt, dimensions)) {
                            out.addEmbedding(v);
                        }
                        call.response().end(out.build());
                    }

                    @Override
                    public io.vertx.core.streams.WriteStream<?> out() {
                        return call.response();
                    }
                };
                if (!exchange.submit(-1, answer)) {
                    VllmGrpcService.fail(call.response(), GrpcStatus.RESOURCE_EXHAUSTED, "Too many waiting requests");
                }
            } catch (ApiException e) {
                VllmGrpcService.fail(call.response(), status(e.status), e.getMessage());
            }
        });
    }

    private void refuseErrorFault(long seq) {
        FaultType fault = service.faults().pickFor(service.options.seed(), seq);
        if (fault != null && fault.isError()) {
            throw OpenAiRoutes.faultError(service, fault, false);
        }
    }

    /** The completions request a GenerateRequest stands for, as a body the request parser checks. */
    private ObjectNode completion(GenerateRequest in) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        int promptTokens;
        if (in.hasTokenized()) {
            putIds(body.putArray("prompt"), in.getTokenized().getInputIdsList());
            promptTokens = in.getTokenized().getInputIdsCount();
        } else if (in.hasText()) {
            int[] ids = service.tokenizer.encodePrompt(in.getText());
            ArrayNode prompt = body.putArray("prompt");
            for (int id : ids) {
                prompt.add(id);
            }
            promptTokens = ids.length;
        } else {
            throw ApiException.badRequest(null, "GenerateRequest needs an input: tokenized or text");
        }
        SamplingParams sp = in.getSamplingParams();
        // vLLM's max_tokens None generates up to max-model-len; too long a prompt then fails the context check
        long maxTokens = sp.hasMaxTokens() ? Integer.toUnsignedLong(sp.getMaxTokens())
                : Math.max(1, service.capacity.maxModelLen() - promptTokens);
        body.put("max_tokens", Math.min(Integer.MAX_VALUE, maxTokens));
        if (sp.getMinTokens() != 0) {
            body.put("min_tokens", Integer.toUnsignedLong(sp.getMinTokens()));
        }
        if (sp.getN() != 0) {
            body.put("n", Integer.toUnsignedLong(sp.getN()));
        }
        if (sp.getIgnoreEos()) {
            body.put("ignore_eos", true);
        }
        if (sp.hasSeed()) {
            body.put("seed", sp.getSeed());
        }
        if (sp.getStopCount() > 0) {
            ArrayNode stop = body.putArray("stop");
            sp.getStopList().forEach(stop::add);
        }
        // proto3 zeros are vLLM's "not set": the servicer maps them to SamplingParams' defaults
        if (sp.hasTemperature()) {
            body.put("temperature", sp.getTemperature());
        }
        if (sp.getTopP() != 0) {
            body.put("top_p", sp.getTopP());
        }
        if (sp.getTopK() != 0) {
            body.put("top_k", Integer.toUnsignedLong(sp.getTopK()));
        }
        if (sp.getMinP() != 0) {
            body.put("min_p", sp.getMinP());
        }
        if (sp.getFrequencyPenalty() != 0) {
            body.put("frequency_penalty", sp.getFrequencyPenalty());
        }
        if (sp.getPresencePenalty() != 0) {
            body.put("presence_penalty", sp.getPresencePenalty());
        }
        if (sp.getRepetitionPenalty() != 0) {
            body.put("repetition_penalty", sp.getRepetitionPenalty());
        }
        if (in.hasKvTransferParamsJson()) {
            JsonNode kv;
            try {
                kv = Json.MAPPER.readTree(in.getKvTransferParamsJson());
            } catch (IOException e) {
                throw ApiException.badRequest(KvTransferParams.FIELD, "kv_transfer_params_json is not JSON");
            }
            body.set(KvTransferParams.FIELD, kv);
        }
        return body;
    }

    private static void putIds(ArrayNode array, java.util.List<Integer> ids) {
        for (int id : ids) {
            array.add(Integer.toUnsignedLong(id)); // uint32 on the wire: a huge id stays huge, and out of vocabulary
        }
    }

    private static int[] ids(java.util.List<Integer> list) {
        int[] ids = new int[list.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = list.get(i);
        }
        return ids;
    }

    /** The gRPC status of an HTTP status, as gRPC's HTTP mapping (and vLLM's servicer: 400 is INVALID_ARGUMENT). */
    static GrpcStatus status(int http) {
        return switch (http) {
            case 400, 413 -> GrpcStatus.INVALID_ARGUMENT;
            case 401 -> GrpcStatus.UNAUTHENTICATED;
            case 403 -> GrpcStatus.PERMISSION_DENIED;
            case 404 -> GrpcStatus.NOT_FOUND;
            case 429 -> GrpcStatus.RESOURCE_EXHAUSTED;
            case 503 -> GrpcStatus.UNAVAILABLE;
            default -> GrpcStatus.INTERNAL;
        };
    }

    /** The {@code kv_transfer_params} a finished prefill holding its blocks answers with, as JSON; null otherwise. */
    static String kvTransferJson(Choice[] choices) {
        if (choices[0].heldKv() == null) {
            return null;
        }
        String wrapped = GenerateAnswer.json(g -> {
            g.writeStartObject();
            KvTransferParams.writeResponse(g, choices);
            g.writeEndObject();
        });
        try {
            return Json.MAPPER.readTree(wrapped).get(KvTransferParams.FIELD).toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Generate's answer on the call's stream. */
    private static final class Writer implements TokenExchange.Writer {
        private final GrpcServerResponse<GenerateRequest, GenerateResponse> response;
        private final boolean stream;
        private final Choice[] choices;
        private final GenerateComplete[] completes;

        Writer(GrpcServerResponse<GenerateRequest, GenerateResponse> response, boolean stream, Choice[] choices) {
            this.response = response;
            this.stream = stream;
            this.choices = choices;
            this.completes = new GenerateComplete[choices.length];
        }

        @Override
        public void tokens(Choice c, int from, int to, boolean finished) {
            if (!stream) {
                if (finished) {
                    completes[c.index] = complete(c, 0, to);
                }
                return;
            }
            GenerateStreamChunk.Builder chunk = GenerateStreamChunk.newBuilder().setPromptTokens(c.request.promptTokens())
                    .setCompletionTokens(to - from).setCachedTokens(cached(c)).setIndex(c.index);
            for (int i = from; i < to; i++) {
                chunk.addTokenIds(c.text.id(i));
            }
            response.write(GenerateResponse.newBuilder().setChunk(chunk).build());
            if (finished) {
                response.write(GenerateResponse.newBuilder().setComplete(complete(c, from, to)).build());
            }
        }

        private GenerateComplete complete(Choice c, int from, int to) {
            GenerateComplete.Builder done = GenerateComplete.newBuilder().setFinishReason(c.finishName())
                    .setPromptTokens(c.request.promptTokens()).setCompletionTokens(to - from).setCachedTokens(cached(c))
                    .setIndex(c.index);
            for (int i = from; i < to; i++) {
                done.addOutputIds(c.text.id(i));
            }
            if (c.stopReason() != null) {
                done.setMatchedStopStr(c.stopReason());
            }
            String kv = c.index == 0 ? kvTransferJson(choices) : null;
            if (kv != null) {
                done.setKvTransferParamsJson(kv);
            }
            return done.build();
        }

        private static int cached(Choice c) {
            return Math.max(0, c.request.cachedPromptTokens());
        }

        @Override
        public void done() {
            if (!stream) {
                for (GenerateComplete complete : completes) {
                    response.write(GenerateResponse.newBuilder().setComplete(complete).build());
                }
            }
            response.end();
        }

        @Override
        public io.vertx.core.streams.WriteStream<?> out() {
            return response;
        }
    }
}
