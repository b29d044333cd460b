package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.http.ResponseOutputStream;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.OutputPlan;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.ReturnedPrompt;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The SSE chunks of one streamed completion, as vLLM's OpenAI server writes them: {@code data: {json}\n\n}, a role
 * chunk first for chat, one chunk per token, a finish chunk when the last token's chunk could not carry the finish,
 * a usage chunk when asked, then {@code data: [DONE]}. The last chunk carries the {@code infersim} ground truth.
 *
 * <p>A plain token chunk (no logprobs, no usage, not the last) is the choice's pre-built prefix, the token's pre-escaped
 * bytes and a constant suffix: no JSON writer runs per token. The prefix is cut from a chunk the generator wrote with
 * an empty token, so both paths give the same bytes.
 */
final class SseEncoder implements Wire.Stream {
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.UTF_8);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CHAT_SUFFIX = "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TEXT_SUFFIX = "\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n"
            .getBytes(StandardCharsets.UTF_8);
    /** Slack per token chunk for the escaped piece (lorem pieces are a few bytes). */
    private static final int MAX_PIECE_BYTES = 32;
    /** Room per token chunk that carries logprobs or usage. */
    private static final int RICH_CHUNK_BYTES = 512;
    /** About the bytes of one completions top_logprobs entry ({@code " lorem": -1.2345,}), for sizing a start. */
    private static final int LOGPROB_ENTRY_BYTES = 20;

    private final ResponseContext response;
    /** The request, whose flags shape every chunk. */
    private final CompletionRequest request;
    private final byte[] suffix;
    /** Per choice, the bytes of a plain token chunk before the token; null when no chunk of this request is plain. */
    private final byte[][] tokenPrefix;

    SseEncoder(ResponseContext response) {
        this.response = response;
        this.request = response.request();
        this.suffix = request.chat() ? CHAT_SUFFIX : TEXT_SUFFIX;
        this.tokenPrefix = request.logprobs() || request.continuousUsage() ? null : new byte[response.choices().length][];
        if (tokenPrefix != null) {
            for (Choice c : response.choices()) {
                tokenPrefix[c.index] = plainPrefix(c);
            }
        }
    }

    private byte[] plainPrefix(Choice c) {
        ByteBuf template = Unpooled.buffer(256);
        Json.inMemory(() -> chunk(new ByteBufOutputStream(template), c, g -> tokenChoice(g, c.index, "", null, null, null, false), false));
        byte[] bytes = ByteBufUtil.getBytes(template);
        int cut = bytes.length - suffix.length;
        if (cut < 1 || !Arrays.equals(bytes, cut, bytes.length, suffix, 0, suffix.length) || bytes[cut - 1] != '"') {
            throw new IllegalStateException("a plain token chunk no longer ends with its constant suffix: "
                    + new String(bytes, StandardCharsets.UTF_8));
        }
        return Arrays.copyOf(bytes, cut);
    }

    /** Buffer room for {@code tokens} token chunks of {@code c}: the usual write fills one array without growing it. */
    @Override
    public int capacityFor(Choice c, int tokens) {
        int perToken = tokenPrefix == null ? RICH_CHUNK_BYTES : tokenPrefix[c.index].length + suffix.length + MAX_PIECE_BYTES;
        return Math.max(1, tokens) * perToken;
    }

    /** Chat: the assistant role chunk before the first token (with usage so far under continuous usage stats). */
    @Override
    public void role(ByteBuf out, Choice c) {
        Json.inMemory(() -> role(new ByteBufOutputStream(out), c));
    }

    private void role(OutputStream out, Choice c) throws IOException {
        chunk(out, c, g -> {
            g.writeNumberField("index", c.index);
            g.writeObjectFieldStart("delta");
            g.writeStringField("role", "assistant");
            g.writeStringField("content", "");
            g.writeEndObject();
            g.writeNullField("logprobs");
            g.writeNullField("finish_reason");
        }, false);
    }

    /**
     * Chat echo: vLLM streams it as its own chunk right after the role chunk, before any token: content only, no
     * stop_reason, and under continuous usage stats the usage of a choice with no completion tokens yet.
     */
    @Override
    public void echoMessage(ByteBuf out, Choice c) {
        Json.inMemory(() -> echoMessage(new ByteBufOutputStream(out), c));
    }

    private void echoMessage(OutputStream out, Choice c) throws IOException {
        chunk(out, c, g -> {
            g.writeNumberField("index", c.index);
            g.writeObjectFieldStart("delta");
            g.writeStringField("content", request.echoMessage());
            g.writeEndObject();
            g.writeNullField("logprobs");
            g.writeNullField("finish_reason");
        }, false);
    }

    /** Token {@code i} of {@code c}; {@code last} adds the finish, {@code withTruth} the ground truth. */
    @Override
    public void token(ByteBuf out, Choice c, int i, boolean last, boolean withTruth) {
        if (c.plan != null) {
            Json.inMemory(() -> plannedToken(new ByteBufOutputStream(out), c, i, last, withTruth));
            return;
        }
        boolean echoHere = i == 0 && request.echo();
        if (tokenPrefix != null && !last && c.stops == null && !echoHere) {
            out.writeBytes(tokenPrefix[c.index]).writeBytes(c.text.json(i)).writeBytes(suffix);
            return;
        }
        Json.inMemory(() -> richToken(new ByteBufOutputStream(out), c, i, last, withTruth));
    }

    /**
     * Whether the start of {@code c} (chat's role and echo chunks, then the first token with any echoed prompt and its
     * logprobs) is too large to write on an event loop: an echoed 100,000-token prompt scored at depth 20 is tens of
     * megabytes in one chunk.
     */
    @Override
    public boolean largeStart(Choice c) {
        long bytes = request.echoMessage() == null ? 0 : request.echoMessage().length() * 2L;
        if (request.echo()) {
            ReturnedPrompt p = response.logprobs().promptOf(c);
            bytes += p.text().length() * 2L;
            if (request.logprobs()) {
                bytes += (long) p.ids().length * Math.max(1, request.topLogprobs()) * LOGPROB_ENTRY_BYTES;
            }
        }
        return bytes > ResponseOutputStream.OFF_LOOP_BYTES;
    }

    /** The start of {@code c} written by a worker thread into {@code out}: what the event loop would have sent. */
    @Override
    public void start(OutputStream out, Choice c, boolean last, boolean withTruth) throws IOException {
        if (request.chat()) {
            role(out, c);
            if (request.echoMessage() != null) {
                echoMessage(out, c);
            }
        }
        richToken(out, c, 0, last, withTruth);
    }

    private void richToken(OutputStream out, Choice c, int i, boolean last, boolean withTruth) throws IOException {
        boolean echoHere = i == 0 && request.echo();
        String piece = c.streamedPiece(i, last);
        Json.Writer lp = null;
        if (echoHere) {
            // vLLM's first chunk of an echoed choice carries the prompt text (and its logprobs) before the first
            // token; with max_tokens 0 it carries the prompt alone.
            boolean promptOnly = request.promptOnly();
            piece = response.logprobs().promptOf(c).text() + (promptOnly ? "" : piece);
            if (request.logprobs()) {
                lp = g -> response.logprobs().writeCompletion(g, c, true, 0, promptOnly ? 0 : 1, 0);
            }
        } else if (request.logprobs()) {
            int offset = c.logprobOffset;
            lp = request.chat() ? g -> response.logprobs().writeChat(g, c, i, i + 1) : g -> response.logprobs().writeCompletion(g, c, false, i, i + 1, offset);
        }
        if (request.logprobs() && !request.chat()) {
            c.logprobOffset += piece.codePointCount(0, piece.length()); // vLLM offsets a chunk by the text sent before it
        }
        String text = piece;
        Json.Writer logprobsOfChunk = lp;
        chunk(out, c, g -> tokenChoice(g, c.index, text, logprobsOfChunk, last ? c.finishName() : null, c.stopReason(), last),
                withTruth);
    }

    /**
     * Token {@code i} of a chat choice shaped by its {@link OutputPlan}: a reasoning, content or tool-call delta, no
     * chunk for a token the client does not see unless it is the last, whose chunk carries the finish. With stop
     * strings, the text a token releases ({@link Choice#streamedPiece}) goes in the delta of the token that releases it.
     */
    private void plannedToken(OutputStream out, Choice c, int i, boolean last, boolean withTruth) throws IOException {
        String piece = c.streamedPiece(i, last);
        if (!last && !c.plan.visible(i)) {
            return;
        }
        String text = piece;
        chunk(out, c, g -> {
            g.writeNumberField("index", c.index);
            g.writeObjectFieldStart("delta");
            c.plan.writeDelta(g, i, text);
            g.writeEndObject();
            g.writeFieldName("logprobs");
            if (request.logprobs()) {
                response.logprobs().writeChat(g, c, i, i + 1);
            } else {
                g.writeNull();
            }
            g.writeStringField("finish_reason", last ? c.finishName() : null);
            if (last) {
                g.writeStringField("stop_reason", c.stopReason());
            }
        }, withTruth);
    }

    /** The finish of {@code c} on its own, when its last token's chunk went out before the finish was known. */
    @Override
    public void finish(ByteBuf out, Choice c, boolean withTruth) {
        Json.inMemory(() -> finish(new ByteBufOutputStream(out), c, withTruth));
    }

    private void finish(OutputStream out, Choice c, boolean withTruth) throws IOException {
        String held = c.releaseHeld();
        chunk(out, c, g -> {
            g.writeNumberField("index", c.index);
            if (request.chat()) {
                g.writeObjectFieldStart("delta");
                if (!held.isEmpty()) {
                    g.writeStringField("content", held);
                }
                g.writeEndObject();
            } else {
                g.writeStringField("text", held);
            }
            g.writeNullField("logprobs");
            g.writeStringField("finish_reason", c.finishName());
            g.writeNullField("stop_reason");
        }, withTruth);
    }

    /** include_usage: the request's usage in a chunk without choices, with the ground truth. */
    @Override
    public void usage(ByteBuf out) {
        out.writeBytes(DATA);
        Json.write(out, g -> {
            head(g);
            g.writeEndArray();
            Usage.writeRequest(g, request, response.choices());
            response.truth().writeField(g);
            g.writeEndObject();
        });
        out.writeBytes(END);
    }

    @Override
    public void done(ByteBuf out) {
        out.writeBytes(DONE);
    }

    private void tokenChoice(JsonGenerator g, int index, String piece, Json.Writer lp, String finish, String stopReason,
                             boolean last) throws IOException {
        g.writeNumberField("index", index);
        if (request.chat()) {
            g.writeObjectFieldStart("delta");
            g.writeStringField("content", piece);
            g.writeEndObject();
        } else {
            g.writeStringField("text", piece);
        }
        g.writeFieldName("logprobs");
        if (lp == null) {
            g.writeNull();
        } else {
            lp.write(g);
        }
        g.writeStringField("finish_reason", finish);
        if (last || !request.chat()) {
            g.writeStringField("stop_reason", last ? stopReason : null);
        }
    }

    /**
     * One chunk with one choice: the head, the choice as {@code body} writes it, usage (continuous usage stats: the
     * choice's so far; else null on completions, absent on chat, as vLLM), and the ground truth when asked.
     */
    private void chunk(OutputStream out, Choice c, Json.Writer body, boolean withTruth) throws IOException {
        out.write(DATA);
        Json.write(out, g -> {
            head(g);
            g.writeStartObject();
            body.write(g);
            g.writeEndObject();
            g.writeEndArray();
            if (request.continuousUsage()) {
                Usage.writeChoice(g, c);
            } else if (!request.chat()) {
                g.writeNullField("usage");
            }
            if (withTruth) {
                response.truth().writeField(g);
            }
            g.writeEndObject();
        });
        out.write(END);
    }

    /** Opens the chunk object and its choices array. */
    private void head(JsonGenerator g) throws IOException {
        g.writeStartObject();
        response.writeIdentity(g, request.chat() ? "chat.completion.chunk" : "text_completion");
        g.writeArrayFieldStart("choices");
    }
}
