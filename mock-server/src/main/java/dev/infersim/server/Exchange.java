package dev.infersim.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.internal.buffer.BufferInternal;

import java.nio.charset.StandardCharsets;

/**
 * One completion request on its event loop: turns the parsed request into engine requests (one per choice), then
 * writes what the engine thread hands over, as vLLM's OpenAI server does: SSE chunks
 * ({@code data: {json}\n\n}, a role chunk first for chat, one chunk per token, a usage chunk when asked, then
 * {@code data: [DONE]}) or one JSON body. The last chunk (or the body) carries the {@code infersim} ground truth.
 * Everything here runs on the exchange's event loop; the per-token path appends pre-built bytes.
 */
final class Exchange {
    private static final byte[] CHAT_SUFFIX = "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TEXT_SUFFIX = "\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n"
            .getBytes(StandardCharsets.UTF_8);
    /** Slack per token chunk for the escaped piece (lorem pieces are a few bytes). */
    private static final int MAX_PIECE_BYTES = 32;
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);

    private final ModelService service;
    private final CompletionRequest request;
    private final HttpServerResponse response;
    private final Context context;
    private final String id;
    private final String requestId;
    private final long created;
    private final FaultType fault;
    private final Choice[] choices;
    private final byte[][] tokenPrefix;
    private final String chunkHead;
    private int finishedChoices;
    private int tokensSent;
    private boolean headWritten;
    private boolean done;
    private boolean faultApplied;
    private long holdUntilNanos;
    private boolean holdTimerArmed;

    Exchange(ModelService service, CompletionRequest request, HttpServerResponse response, Context context, String requestId,
             long seq, long arrivalNanos, FaultType fault) {
        this.service = service;
        this.request = request;
        this.response = response;
        this.context = context;
        this.requestId = requestId;
        this.id = (request.chat() ? "chatcmpl-" : "cmpl-") + requestId;
        this.created = System.currentTimeMillis() / 1000;
        this.fault = fault;
        // The id embeds the client's x-request-id, which may hold any header characters: escape it like the model name.
        this.chunkHead = "data: {\"id\":\"" + Json.escape(id) + "\",\"object\":\"" + (request.chat() ? "chat.completion.chunk" : "text_completion")
                + "\",\"created\":" + created + ",\"model\":\"" + Json.escape(service.options.servedModelName()) + "\",\"choices\":[";
        int perPrompt = request.n();
        choices = new Choice[request.prompts().size() * perPrompt];
        tokenPrefix = new byte[choices.length][];
        EventLoopBatch batch = service.batchFor(context);
        for (int p = 0; p < request.prompts().size(); p++) {
            for (int j = 0; j < perPrompt; j++) {
                int index = p * perPrompt + j;
                choices[index] = newChoice(index, p, seq, arrivalNanos, batch);
                tokenPrefix[index] = (chunkHead + "{\"index\":" + index + (request.chat() ? ",\"delta\":{\"content\":\"" : ",\"text\":\""))
                        .getBytes(StandardCharsets.UTF_8);
            }
        }
    }

    private Choice newChoice(int index, int promptIndex, long seq, long arrivalNanos, EventLoopBatch batch) {
        ServerOptions o = service.options;
        int[] prompt = request.prompts().get(promptIndex);
        long textSeed = request.seed() != null ? request.seed() + index : LoremVocabulary.mix(o.seed(), seq * 1_000_003L + index);
        TokenText text = o.outputMode() == OutputMode.ECHO && request.echoIds().get(promptIndex).length > 0
                ? TokenText.echo(service.tokenizer, request.echoIds().get(promptIndex))
                : TokenText.lorem(service.vocabulary, textSeed);
        int room = service.capacity.maxModelLen() - prompt.length;
        // Echo with max_tokens 0 still runs one engine token, as vLLM does, and returns only the prompt.
        int maxTokens = request.maxTokens() == null ? room : Math.min(Math.max(1, request.maxTokens()), room);
        int minTokens = Math.min(request.minTokens(), maxTokens);
        int eos = request.ignoreEos() ? EngineRequest.NO_EOS : o.outputLengths().draw(LoremVocabulary.uniform(textSeed, -1));
        int scan = eos == EngineRequest.NO_EOS ? maxTokens : Math.min(maxTokens, Math.max(eos, minTokens));
        StopMatch stop = StopMatch.find(text, request.stop(), minTokens, scan);
        if (stop != null) {
            eos = stop.tokens();
        }
        EngineRequest r = new EngineRequest(service.nextEngineId(), prompt.length, prompt, maxTokens, minTokens, eos,
                request.priority(), arrivalNanos);
        return new Choice(this, index, r, text, stop, batch, request.tokenTimes());
    }

    boolean isStreaming() {
        return request.stream();
    }

    /**
     * Whether each token must reach the event loop: a stream writes it, and a non-stream disconnect fault counts tokens
     * to drop the connection mid-generation. Other non-stream exchanges need only the finish.
     */
    boolean wantsTokens() {
        return request.stream() || fault == FaultType.DISCONNECT;
    }

    int choiceCount() {
        return choices.length;
    }

    /** Reserves waiting slots and hands the choices to the engine; false (nothing submitted) when the queue is full. */
    boolean submit() {
        if (!service.loop.reserve(choices.length, service.options.maxWaitingRequests())) {
            return false;
        }
        service.activeExchanges.incrementAndGet();
        response.closeHandler(v -> clientGone());
        for (Choice c : choices) {
            service.loop.submit(c);
        }
        return true;
    }

    private void clientGone() {
        if (done) {
            return;
        }
        finish();
        for (Choice c : choices) {
            service.loop.abort(c);
        }
    }

    /** Resets the connection and aborts every choice still in the engine (finish() first: clientGone would skip them). */
    private void dropConnection() {
        finish();
        for (Choice c : choices) {
            service.loop.abort(c);
        }
        response.reset();
    }

    private void finish() {
        done = true;
        service.activeExchanges.decrementAndGet();
    }

    /** Event loop: the engine published tokens or a finish for {@code c}. */
    void deliver(Choice c) {
        if (done) {
            return;
        }
        if (!request.stream()) {
            if (fault == FaultType.DISCONNECT && Choice.emitted(c.published()) >= service.faults.get().afterTokens()
                    && !Choice.finished(c.published())) {
                // Drop the connection mid-generation, as a crashed backend would, and stop the engine's work for it;
                // waiting for the whole generation made the fault a late reset counted as a 'length' success.
                dropConnection();
                return;
            }
            if (Choice.finished(c.published()) && !c.finishHandled) {
                c.finishHandled = true;
                if (++finishedChoices == choices.length) {
                    answerWhole();
                }
            }
            return;
        }
        if (holdUntilNanos != 0) {
            if (System.nanoTime() < holdUntilNanos) {
                armHoldTimer();
                return;
            }
            holdUntilNanos = 0;
        }
        // A pooled direct buffer, given back once the socket has taken it: a heap Buffer per write was the largest
        // allocation of a busy server (young GCs stop the engine thread) and Netty copied it to a direct one anyway.
        ByteBuf bytes = PooledByteBufAllocator.DEFAULT.directBuffer(capacityFor(c));
        Buffer out = BufferInternal.buffer(bytes);
        boolean ended = stream(c, out);
        if (!headWritten) {
            headWritten = true;
            response.setChunked(true).putHeader("content-type", "text/event-stream; charset=utf-8");
        }
        if (out.length() > 0) {
            Future<Void> written = ended ? response.end(out) : response.write(out);
            written.onComplete(ar -> bytes.release());
        } else {
            bytes.release();
        }
        if (fault == FaultType.DISCONNECT && faultApplied && !done) {
            response.reset();
        }
    }

    /**
     * Room for every unsent token chunk of {@code c} plus slack, so the usual write (one or two plain token chunks) fills
     * one array without growing it; the rare final chunks with ground truth may still grow it once.
     */
    private int capacityFor(Choice c) {
        int pending = Math.max(1, Choice.emitted(c.published()) - c.written);
        return pending * (tokenPrefix[c.index].length + TEXT_SUFFIX.length + MAX_PIECE_BYTES);
    }

    /** Appends every unsent event of {@code c}; true when the response is complete. */
    private boolean stream(Choice c, Buffer out) {
        int published = c.published();
        boolean finished = Choice.finished(published);
        int emitted = Choice.emitted(published);
        if (fault == FaultType.SLOW_FIRST_TOKEN && !faultApplied && emitted > 0) {
            faultApplied = true;
            hold(service.faults.get().slowFirstTokenMs());
            return false;
        }
        if (request.chat() && !c.roleSent && emitted > 0) {
            c.roleSent = true;
            // Under continuous usage stats vLLM puts usage (0 completion tokens so far) on the role chunk too.
            out.appendString(chunkHead + "{\"index\":" + c.index
                    + ",\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]"
                    + (request.continuousUsage() ? "," + usageJson(c.index) : "") + "}\n\n");
            if (request.echoMessage() != null) {
                appendEchoChunk(out, c);
            }
        }
        while (c.written < emitted) {
            if (applyStreamFault(c)) {
                return false;
            }
            int i = c.written++;
            boolean last = finished && i == emitted - 1;
            appendToken(out, c, i, last);
            c.finalChunkSent = last;
            tokensSent++;
        }
        if (finished && !c.finishHandled) {
            c.finishHandled = true;
            boolean lastChoice = ++finishedChoices == choices.length;
            if (!c.finalChunkSent) {
                appendFinishChunk(out, c, lastChoice);
            }
            if (lastChoice) {
                if (request.includeUsage()) {
                    out.appendString(chunkHead + "]," + usageJson(-1) + "," + groundTruthField() + "}\n\n");
                }
                out.appendBytes(DONE);
                finish();
                return true;
            }
        }
        return false;
    }

    /**
     * vLLM streams a chat echo as its own chunk right after the role chunk, before any token: content only, no
     * stop_reason, and under continuous usage stats the usage of a choice with no completion tokens yet.
     */
    private void appendEchoChunk(Buffer out, Choice c) {
        out.appendString(chunkHead + "{\"index\":" + c.index + ",\"delta\":{\"content\":\"" + Json.escape(request.echoMessage())
                + "\"},\"logprobs\":null,\"finish_reason\":null}]"
                + (request.continuousUsage() ? "," + usageJson(c.index) : "") + "}\n\n");
    }

    private boolean applyStreamFault(Choice c) {
        if (fault == null || faultApplied) {
            return false;
        }
        FaultSettings settings = service.faults.get();
        if (tokensSent == settings.afterTokens() && (fault == FaultType.STALL || fault == FaultType.DISCONNECT)) {
            faultApplied = true;
            if (fault == FaultType.STALL) {
                hold(settings.stallMs());
            }
            return true;
        }
        return false;
    }

    private void hold(long wallMs) {
        holdUntilNanos = System.nanoTime() + wallMs * 1_000_000;
        armHoldTimer();
    }

    private void armHoldTimer() {
        if (holdTimerArmed) {
            return;
        }
        holdTimerArmed = true;
        long ms = Math.max(1, (holdUntilNanos - System.nanoTime() + 999_999) / 1_000_000);
        context.owner().setTimer(ms, t -> {
            holdTimerArmed = false;
            for (Choice ch : choices) {
                deliver(ch);
            }
        });
    }

    private void appendToken(Buffer out, Choice c, int i, boolean last) {
        boolean truncated = c.stopTextLength != Integer.MAX_VALUE;
        boolean echoHere = i == 0 && request.echo();
        if (!last && !truncated && !echoHere && !request.logprobs() && !request.continuousUsage()) {
            out.appendBytes(tokenPrefix[c.index]).appendBytes(c.text.json(i)).appendBytes(request.chat() ? CHAT_SUFFIX : TEXT_SUFFIX);
            return;
        }
        String piece = c.text.piece(i);
        if (truncated) {
            int keep = Math.max(0, Math.min(piece.length(), c.stopTextLength - c.charsWritten));
            c.charsWritten += piece.length();
            piece = piece.substring(0, keep);
        }
        String logprobs = "null";
        if (echoHere) {
            // vLLM's first chunk of an echoed choice carries the prompt text (and its logprobs) before the first
            // token; with max_tokens 0 it carries the prompt alone.
            boolean promptOnly = request.promptOnly();
            piece = promptOf(c).text() + (promptOnly ? "" : piece);
            if (request.logprobs()) {
                logprobs = completionLogprobs(c, true, 0, promptOnly ? 0 : 1, 0);
            }
        } else if (request.logprobs()) {
            logprobs = request.chat() ? chatLogprobs(c, i, i + 1) : completionLogprobs(c, false, i, i + 1, c.logprobOffset);
        }
        if (request.logprobs() && !request.chat()) {
            c.logprobOffset += piece.codePointCount(0, piece.length()); // vLLM offsets a chunk by the text sent before it
        }
        StringBuilder b = new StringBuilder(256).append(chunkHead).append("{\"index\":").append(c.index);
        b.append(request.chat() ? ",\"delta\":{\"content\":\"" : ",\"text\":\"").append(Json.escape(piece))
                .append(request.chat() ? "\"}," : "\",");
        b.append("\"logprobs\":").append(logprobs);
        b.append(",\"finish_reason\":").append(last ? "\"" + finishName(c) + "\"" : "null");
        if (last || !request.chat()) {
            b.append(",\"stop_reason\":").append(last && c.stopReason != null ? "\"" + Json.escape(c.stopReason) + "\"" : "null");
        }
        b.append("}]");
        if (request.continuousUsage()) {
            b.append(',').append(usageJson(c.index));
        } else if (!request.chat()) {
            b.append(",\"usage\":null");
        }
        if (last && finishedChoices + 1 == choices.length && !request.includeUsage()) {
            b.append(',').append(groundTruthField());
        }
        out.appendString(b.append("}\n\n").toString());
    }

    private void appendFinishChunk(Buffer out, Choice c, boolean lastChoice) {
        StringBuilder b = new StringBuilder(chunkHead).append("{\"index\":").append(c.index)
                .append(request.chat() ? ",\"delta\":{}," : ",\"text\":\"\",")
                .append("\"logprobs\":null,\"finish_reason\":\"").append(finishName(c)).append("\",\"stop_reason\":null}]");
        if (request.continuousUsage()) {
            b.append(',').append(usageJson(c.index));
        } else if (!request.chat()) {
            b.append(",\"usage\":null");
        }
        if (lastChoice && !request.includeUsage()) {
            b.append(',').append(groundTruthField());
        }
        out.appendString(b.append("}\n\n").toString());
    }

    /** Usage so far: of one choice with its prompt ({@code index >= 0}, continuous usage) or of the whole request. */
    private String usageJson(int index) {
        long prompt = 0;
        long completion = 0;
        if (index >= 0) {
            prompt = choices[index].request.promptTokens();
            completion = choices[index].written;
        } else {
            for (int p = 0; p < request.prompts().size(); p++) {
                prompt += request.prompts().get(p).length;
            }
            for (Choice c : choices) {
                completion += c.request.outputTokens();
            }
        }
        return "\"usage\":{\"prompt_tokens\":" + prompt + ",\"total_tokens\":" + (prompt + completion)
                + ",\"completion_tokens\":" + completion + "}";
    }

    private String chatLogprobs(Choice c, int from, int to) {
        StringBuilder b = new StringBuilder(128);
        b.append("{\"content\":[");
        for (int i = from; i < to; i++) {
            if (i > from) {
                b.append(',');
            }
            double lp = logprob(c, i, 0);
            appendTokenLogprob(b, c.text.piece(i), lp);
            b.setLength(b.length() - 1);
            b.append(",\"top_logprobs\":[");
            for (int k = 0; k < request.topLogprobs(); k++) {
                if (k > 0) {
                    b.append(',');
                }
                appendTokenLogprob(b, k == 0 ? c.text.piece(i) : c.text.alternative(i, k), logprob(c, i, k));
            }
            b.append("]}");
        }
        return b.append("]}").toString();
    }

    /**
     * Completions logprobs of output tokens [from, to) of {@code c}, after the echoed prompt's tokens when
     * {@code withPrompt} (vLLM scores the prompt when echo asks for logprobs; its first token has none).
     */
    private String completionLogprobs(Choice c, boolean withPrompt, int from, int to, int initialOffset) {
        CompletionLogprobs lp = new CompletionLogprobs(request.topLogprobs(), initialOffset);
        if (withPrompt) {
            ReturnedPrompt p = promptOf(c);
            LoremVocabulary words = service.vocabulary;
            lp.addUnscored(p.pieces()[0]);
            for (int j = 1; j < p.ids().length; j++) {
                int at = j;
                lp.add(p.pieces()[j], p.likeliest(j), rank -> words.pieces[p.alternative(at, rank, words)]);
            }
        }
        for (int i = from; i < to; i++) {
            int at = i;
            lp.add(c.text.piece(i), -1.5 * LoremVocabulary.uniform(c.request.id(), i), rank -> c.text.alternative(at, rank));
        }
        return lp.json();
    }

    private ReturnedPrompt promptOf(Choice c) {
        return request.returnedPrompts().get(c.index / request.n());
    }

    /** Synthetic but well-formed: the sampled token is the most likely, alternatives decrease with rank. */
    private static double logprob(Choice c, int i, int rank) {
        return CompletionLogprobs.value(-1.5 * LoremVocabulary.uniform(c.request.id(), i), rank);
    }

    private static void appendTokenLogprob(StringBuilder b, String token, double lp) {
        b.append("{\"token\":\"").append(Json.escape(token)).append("\",\"logprob\":").append(lp).append(",\"bytes\":[");
        byte[] bytes = token.getBytes(StandardCharsets.UTF_8);
        for (int j = 0; j < bytes.length; j++) {
            b.append(j > 0 ? "," : "").append(bytes[j] & 0xff);
        }
        b.append("]}");
    }

    /** Non-stream: the body once every choice is done, unless a fault drops or delays it. */
    private void answerWhole() {
        FaultSettings settings = service.faults.get();
        if (fault == FaultType.DISCONNECT) {
            dropConnection();
        } else if (fault == FaultType.STALL || fault == FaultType.SLOW_FIRST_TOKEN) {
            long ms = fault == FaultType.STALL ? settings.stallMs() : settings.slowFirstTokenMs();
            context.owner().setTimer(Math.max(1, ms), t -> {
                if (!done) {
                    writeBody();
                }
            });
        } else {
            writeBody();
        }
    }

    /**
     * The non-stream body with every key vLLM's response models dump, unset ones as null (vLLM serializes its pydantic
     * models whole): ChatCompletionResponse / ChatMessage and CompletionResponse / CompletionResponseChoice as of vLLM
     * 0.10, so a client that reads the key set (or a schema-strict one) sees what vLLM sends.
     */
    private void writeBody() {
        finish();
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("id", id).put("object", request.chat() ? "chat.completion" : "text_completion").put("created", created)
                .put("model", service.options.servedModelName());
        ArrayNode list = body.putArray("choices");
        for (Choice c : choices) {
            writeChoice(list.addObject().put("index", c.index), c);
        }
        if (request.chat()) {
            body.putNull("service_tier").putNull("system_fingerprint");
        }
        body.set("usage", readTree("{" + usageJson(-1) + "}").get("usage"));
        if (request.chat()) {
            // vLLM's chat response scores its one prompt once, at the top level.
            body.set("prompt_logprobs", request.promptLogprobs() == null ? null
                    : readTree(PromptLogprobs.json(request.returnedPrompts().get(0), request.promptLogprobs(), service.vocabulary)));
            body.putNull("prompt_token_ids");
        }
        body.putNull("kv_transfer_params");
        body.set("infersim", groundTruth());
        response.putHeader("content-type", "application/json").end(body.toString());
    }

    private void writeChoice(ObjectNode choice, Choice c) {
        String text = c.finalText();
        if (request.echo()) {
            text = promptOf(c).text() + (request.promptOnly() ? "" : text);
        }
        if (request.chat()) {
            if (request.echoMessage() != null) {
                text = request.echoMessage() + text;
            }
            ObjectNode message = choice.putObject("message").put("role", "assistant").put("content", text);
            message.putNull("refusal").putNull("annotations").putNull("audio").putNull("function_call");
            message.putArray("tool_calls");
            message.putNull("reasoning_content");
        } else {
            choice.put("text", text);
        }
        if (request.logprobs()) {
            choice.set("logprobs", readTree(request.chat() ? chatLogprobs(c, 0, c.request.outputTokens())
                    : completionLogprobs(c, request.echo(), 0, request.promptOnly() ? 0 : c.request.outputTokens(), 0)));
        } else {
            choice.putNull("logprobs");
        }
        choice.put("finish_reason", finishName(c));
        if (c.stopReason != null && c.request.finishReason() == FinishReason.STOP) {
            choice.put("stop_reason", c.stopReason);
        } else {
            choice.putNull("stop_reason");
        }
        if (!request.chat()) {
            choice.set("prompt_logprobs", request.promptLogprobs() == null ? null
                    : readTree(PromptLogprobs.json(promptOf(c), request.promptLogprobs(), service.vocabulary)));
        }
    }

    private static String finishName(Choice c) {
        FinishReason r = c.request.finishReason();
        return r == null ? "abort" : r.openAiName();
    }

    private static com.fasterxml.jackson.databind.JsonNode readTree(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("built invalid JSON: " + json, e);
        }
    }

    private String groundTruthField() {
        return "\"infersim\":" + groundTruth();
    }

    /**
     * The server's own timeline of every choice, in model time (what the modelled GPU takes; ms since server start)
     * and wall time (Unix epoch ms for instants, wall ms for durations = model ms / time scale).
     */
    private ObjectNode groundTruth() {
        ModelClock clock = service.clock;
        ObjectNode truth = Json.MAPPER.createObjectNode().put("request_id", requestId)
                .put("replica", service.options.replica()).put("time_scale", clock.timeScale());
        ArrayNode list = truth.putArray("choices");
        for (Choice c : choices) {
            EngineRequest r = c.request;
            ObjectNode o = list.addObject().put("index", c.index).put("prompt_tokens", r.promptTokens())
                    .put("cached_prompt_tokens", Math.max(0, r.cachedPromptTokens())).put("completion_tokens", r.outputTokens())
                    .put("finish_reason", finishName(c))
                    .put("preemptions", r.preemptions());
            timeline(o.putObject("model"), c, 1e6, false);
            timeline(o.putObject("wall"), c, 1e6 * clock.timeScale(), true);
        }
        return truth;
    }

    private void timeline(ObjectNode o, Choice c, double nanosPerMs, boolean epoch) {
        EngineRequest r = c.request;
        instant(o, "arrival_ms", r.arrivalNanos(), nanosPerMs, epoch);
        instant(o, "scheduled_ms", r.firstScheduledNanos(), nanosPerMs, epoch);
        instant(o, "first_token_ms", r.firstTokenNanos(), nanosPerMs, epoch);
        instant(o, "finished_ms", r.finishedNanos(), nanosPerMs, epoch);
        ArrayNode pre = o.putArray("preempted_ms");
        for (long t : c.preemptionTimes()) {
            pre.add(epoch ? service.clock.toEpochMillis(t) : t / nanosPerMs);
        }
        duration(o, "queue_time_ms", r.arrivalNanos(), r.firstScheduledNanos(), nanosPerMs);
        duration(o, "prefill_time_ms", r.firstScheduledNanos(), r.firstTokenNanos(), nanosPerMs);
        duration(o, "decode_time_ms", r.firstTokenNanos(), r.finishedNanos(), nanosPerMs);
        duration(o, "e2e_ms", r.arrivalNanos(), r.finishedNanos(), nanosPerMs);
        long[] times = c.tokenTimes();
        if (times != null) {
            ArrayNode t = o.putArray("token_times_ms");
            for (long x : times) {
                t.add(epoch ? service.clock.toEpochMillis(x) : x / nanosPerMs);
            }
        }
    }

    private void instant(ObjectNode o, String key, long nanos, double nanosPerMs, boolean epoch) {
        if (nanos < 0) {
            o.putNull(key);
        } else {
            o.put(key, epoch ? service.clock.toEpochMillis(nanos) : nanos / nanosPerMs);
        }
    }

    private static void duration(ObjectNode o, String key, long from, long to, double nanosPerMs) {
        if (from < 0 || to < 0) {
            o.putNull(key);
        } else {
            o.put(key, (to - from) / nanosPerMs);
        }
    }
}
