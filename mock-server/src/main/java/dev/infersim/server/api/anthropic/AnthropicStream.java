package dev.infersim.server.api.anthropic;

import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.OutputPlan;
import io.netty.buffer.ByteBuf;


/**
 * The Messages event stream vLLM makes of a chat stream ({@code AnthropicServingMessages.message_stream_converter} at
 * vLLM main 9aaf83ef502fc37bc647f6e474314d48ba36cd1c), each {@code event: TYPE\ndata: JSON\n\n} with vLLM's
 * {@code exclude_unset} fields: {@code message_start} (the role chunk, with the prompt's tokens), then per content
 * block {@code content_block_start}, its deltas ({@code thinking_delta}, {@code text_delta}, {@code input_json_delta})
 * and {@code content_block_stop} (a thinking block signs itself with a {@code signature_delta} first), then
 * {@code message_delta} with the stop reason and usage, and {@code message_stop}. The ground truth rides on
 * {@code message_delta} as {@code infersim}. One choice (Messages has no n).
 */
final class AnthropicStream implements Wire.Stream {
    private static final int EVENT_BYTES = 256;

    private final ResponseContext response;
    /** The open block's type (thinking, text, tool_use), or null; blocks are numbered in order from 0. */
    private String block;
    private int blockIndex = -1;
    private String finish;
    /** The stop sequence that ended the message, or null. */
    private String stopSequence;

    AnthropicStream(ResponseContext response) {
        this.response = response;
    }

    @Override
    public int capacityFor(Choice c, int tokens) {
        return Math.max(1, tokens) * EVENT_BYTES;
    }

    @Override
    public void role(ByteBuf out, Choice c) {
        event(out, "message_start", g -> {
            g.writeObjectFieldStart("message");
            g.writeStringField("id", response.id());
            g.writeArrayFieldStart("content");
            g.writeEndArray();
            g.writeStringField("model", response.model());
            g.writeNullField("stop_reason");
            g.writeNullField("stop_sequence");
            g.writeObjectFieldStart("usage");
            g.writeNumberField("input_tokens", c.request.promptTokens());
            g.writeNumberField("output_tokens", 0);
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    @Override
    public void echoMessage(ByteBuf out, Choice c) {
        // Messages requests carry no echo
    }

    @Override
    public void token(ByteBuf out, Choice c, int i, boolean last, boolean withTruth) {
        String piece = c.streamedPiece(i, last);
        OutputPlan plan = c.plan;
        OutputPlan.Channel channel = c.channel(i);
        if (last) {
            finish = c.finishName();
            stopSequence = c.stopReason();
        }
        switch (channel) {
            case REASONING -> {
                if (plan.includeReasoning && !piece.isEmpty()) {
                    open(out, "thinking", g -> g.writeStringField("thinking", ""));
                    delta(out, "thinking_delta", "thinking", piece);
                }
            }
            case CONTENT -> {
                if (!piece.isEmpty()) {
                    open(out, "text", g -> g.writeStringField("text", ""));
                    delta(out, "text_delta", "text", piece);
                }
            }
            case ARGUMENTS -> {
                if (!"tool_use".equals(block)) {
                    openToolUse(out, plan);
                }
                if (!piece.isEmpty()) {
                    delta(out, "input_json_delta", "partial_json", piece);
                }
            }
            case SILENT -> {
                if (plan.visible(i)) {
                    openToolUse(out, plan); // Hermes' name-only delta starts the block
                }
            }
        }
    }

    private void openToolUse(ByteBuf out, OutputPlan plan) {
        close(out);
        blockIndex++;
        block = "tool_use";
        event(out, "content_block_start", g -> {
            g.writeObjectFieldStart("content_block");
            g.writeStringField("type", "tool_use");
            g.writeStringField("id", plan.toolCallId);
            g.writeStringField("name", plan.toolName);
            g.writeObjectFieldStart("input");
            g.writeEndObject();
            g.writeEndObject();
            g.writeNumberField("index", blockIndex);
        });
    }

    @Override
    public void finish(ByteBuf out, Choice c, boolean withTruth) {
        finish = c.finishName();
        String held = c.releaseHeld();
        if (!held.isEmpty()) {
            open(out, "text", g -> g.writeStringField("text", ""));
            delta(out, "text_delta", "text", held);
        }
        stopSequence = c.stopReason();
    }

    @Override
    public void usage(ByteBuf out) {
        close(out);
        Choice c = response.choices()[0];
        event(out, "message_delta", g -> {
            g.writeObjectFieldStart("delta");
            g.writeStringField("stop_reason", AnthropicMessages.stopReason(finish == null ? "stop" : finish, stopSequence));
            AnthropicMessages.writeStopSequence(g, stopSequence);
            g.writeEndObject();
            g.writeObjectFieldStart("usage");
            g.writeNumberField("input_tokens", c.request.promptTokens());
            g.writeNumberField("output_tokens", c.request.outputTokens());
            g.writeEndObject();
            response.truth().writeField(g);
        });
    }

    @Override
    public void done(ByteBuf out) {
        event(out, "message_stop", g -> { });
    }

    /** Opens a block of {@code type} unless one is open, closing the open one. */
    private void open(ByteBuf out, String type, Json.Writer fields) {
        if (type.equals(block)) {
            return;
        }
        close(out);
        blockIndex++;
        block = type;
        event(out, "content_block_start", g -> {
            g.writeObjectFieldStart("content_block");
            g.writeStringField("type", type);
            fields.write(g);
            g.writeEndObject();
            g.writeNumberField("index", blockIndex);
        });
    }

    private void close(ByteBuf out) {
        if (block == null) {
            return;
        }
        if (block.equals("thinking")) {
            delta(out, "signature_delta", "signature", response.derivedId(blockIndex));
        }
        event(out, "content_block_stop", g -> g.writeNumberField("index", blockIndex));
        block = null;
    }

    private void delta(ByteBuf out, String type, String field, String value) {
        event(out, "content_block_delta", g -> {
            g.writeObjectFieldStart("delta");
            g.writeStringField("type", type);
            g.writeStringField(field, value);
            g.writeEndObject();
            g.writeNumberField("index", blockIndex);
        });
    }

    private static void event(ByteBuf out, String type, Json.Writer fields) {
        Json.event(out, type, g -> {
            g.writeStringField("type", type);
            fields.write(g);
        });
    }

}
