package dev.infersim.server.api.openai;

import dev.infersim.server.engine.Choice;
import dev.infersim.server.json.Json;
import dev.infersim.server.request.CompletionRequest;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The wire format an exchange answers in: the OpenAI chat and completions bodies and chunks ({@link #OPENAI}), or one
 * translated from them (Anthropic Messages, OpenAI Responses). A format makes the encoders of one response from its
 * {@link ResponseContext}.
 */
public interface Wire {
    /** What an exchange streams: the chunk (or event) sequence of one response, in the order {@link CompletionExchange} calls. */
    interface Stream {
        /** Buffer room for {@code tokens} token events of {@code c}. */
        int capacityFor(Choice c, int tokens);

        /** Before the first token of {@code c} (chat's role chunk). */
        void role(ByteBuf out, Choice c);

        /** Chat echo's chunk, right after the role. */
        void echoMessage(ByteBuf out, Choice c);

        /** Token {@code i} of {@code c}; {@code last} carries the finish, {@code withTruth} the ground truth. */
        void token(ByteBuf out, Choice c, int i, boolean last, boolean withTruth);

        /** The finish of {@code c}, when its last token went out before the finish was known. */
        void finish(ByteBuf out, Choice c, boolean withTruth);

        /** The usage (and ground truth) after the last choice finished, when the request asked for usage. */
        void usage(ByteBuf out);

        /** The end of the stream. */
        void done(ByteBuf out);

        /**
         * Whether the start of {@code c} (role, echo, first token) is too large to write on an event loop, so that
         * {@link CompletionExchange} has a worker thread write it with {@link #start}; no, unless a format says so.
         */
        default boolean largeStart(Choice c) {
            return false;
        }

        /** The start of {@code c}, written by a worker thread into {@code out}: what the event loop would have sent. */
        default void start(OutputStream out, Choice c, boolean last, boolean withTruth) throws IOException {
            throw new UnsupportedOperationException("this format writes every start on the event loop");
        }

        /**
         * Whether the end of the stream ({@link #done}) is too large to write on an event loop, so that {@link CompletionExchange}
         * has a worker thread write it with {@link #done(OutputStream)}; no, unless a format says so.
         */
        default boolean largeEnd() {
            return false;
        }

        /** The end of the stream, written by a worker thread into {@code out}: what the event loop would have sent. */
        default void done(OutputStream out) throws IOException {
            throw new UnsupportedOperationException("this format writes its end on the event loop");
        }
    }

    /** What an exchange answers without streaming. */
    interface Body {
        void write(ByteBuf out);

        /**
         * About the bytes of the body: over {@code ResponseOutputStream.OFF_LOOP_BYTES}, {@link CompletionExchange} has a worker thread write
         * it with {@link #write(OutputStream)}; 0 (the event loop writes it) unless a format estimates it.
         */
        default long estimatedBytes() {
            return 0;
        }

        /** The body written by a worker thread into {@code out}. */
        default void write(OutputStream out) throws IOException {
            ByteBuf bytes = io.netty.buffer.Unpooled.buffer(1024);
            write(bytes);
            bytes.readBytes(out, bytes.readableBytes());
        }
    }

    /**
     * A request of another API as the chat (or completions) request vLLM makes of it, and the format its answer goes
     * back in.
     */
    record Translation(com.fasterxml.jackson.databind.node.ObjectNode request, boolean chat, Wire wire) {
    }

    /** The body of an error answer in this format; by default OpenAI's {@code {"error": {...}}}. */
    default String error(int status, String message, String param, String type) {
        com.fasterxml.jackson.databind.node.ObjectNode body = Json.MAPPER.createObjectNode();
        body.putObject("error").put("message", message).put("type", type).put("param", param).put("code", status);
        return body.toString();
    }

    /** The response id for {@code requestId}. */
    String id(CompletionRequest request, String requestId);

    Stream stream(ResponseContext response);

    Body body(ResponseContext response);

    /** OpenAI's {@code /v1/chat/completions} and {@code /v1/completions}, as vLLM writes them. */
    Wire OPENAI = new Wire() {
        @Override
        public String id(CompletionRequest request, String requestId) {
            return (request.chat() ? "chatcmpl-" : "cmpl-") + requestId;
        }

        @Override
        public Stream stream(ResponseContext response) {
            return new SseEncoder(response);
        }

        @Override
        public Body body(ResponseContext response) {
            return new WholeBody(response);
        }
    };
}
