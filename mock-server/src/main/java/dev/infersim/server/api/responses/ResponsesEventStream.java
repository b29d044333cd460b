package dev.infersim.server.api.responses;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.http.ResponseOutputStream;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.OutputPlan;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The Responses API's event stream as vLLM writes it without Harmony ({@code SimpleStreamingEventProcessor},
 * {@code streaming_events.py} at vLLM main 9aaf83ef502fc37bc647f6e474314d48ba36cd1c), a state machine over one choice's
 * tokens: {@code response.created}, {@code response.in_progress}, then per output item its added, part-added, delta and
 * done events, and {@code response.completed} carrying the whole {@link ResponseObject} with the {@code infersim}
 * ground truth; each {@code event: TYPE\ndata: JSON}, numbered by {@code sequence_number}.
 */
final class ResponsesEventStream implements Wire.Stream {
    private static final int EVENT_BYTES = 384;

    private enum State { NONE, CONTENT, REASONING, TOOL_CALL }

    private final ResponseObject object;
    private int sequence;
    private int outputIndex;
    private State state = State.NONE;
    private String itemId;
    private final StringBuilder accumulated = new StringBuilder();

    ResponsesEventStream(ResponseObject object) {
        this.object = object;
    }

    @Override
    public int capacityFor(Choice c, int tokens) {
        return Math.max(1, tokens) * EVENT_BYTES;
    }

    @Override
    public void role(ByteBuf out, Choice c) {
        Json.inMemory(() -> role(new ByteBufOutputStream(out)));
    }

    private void role(OutputStream out) throws IOException {
        responseEvent(out, "response.created", false);
        responseEvent(out, "response.in_progress", false);
    }

    /**
     * Whether the first events are too large for an event loop: {@code response.created} and {@code .in_progress} each
     * echo the request's instructions and tools, which may be megabytes.
     */
    @Override
    public boolean largeStart(Choice c) {
        return object.echoedBytes() > ResponseOutputStream.OFF_LOOP_BYTES;
    }

    @Override
    public void start(OutputStream out, Choice c, boolean last, boolean withTruth) throws IOException {
        role(out);
        ByteBuf first = Unpooled.buffer(capacityFor(c, 1));
        token(first, c, 0, last, withTruth);
        first.readBytes(out, first.readableBytes());
    }

    /** {@code response.completed} echoes the request too. */
    @Override
    public boolean largeEnd() {
        return object.echoedBytes() > ResponseOutputStream.OFF_LOOP_BYTES;
    }

    @Override
    public void done(OutputStream out) throws IOException {
        ByteBuf closing = Unpooled.buffer(capacityFor(object.c(), 4));
        close(closing);
        closing.readBytes(out, closing.readableBytes());
        responseEvent(out, "response.completed", true);
    }

    @Override
    public void echoMessage(ByteBuf out, Choice c) {
    }

    @Override
    public void token(ByteBuf out, Choice c, int i, boolean last, boolean withTruth) {
        String piece = c.streamedPiece(i, last);
        OutputPlan plan = c.plan;
        OutputPlan.Channel channel = c.channel(i);
        switch (channel) {
            case REASONING -> {
                move(out, State.REASONING, plan);
                accumulated.append(piece);
                event(out, "response.reasoning_text.delta", g -> {
                    g.writeNumberField("content_index", 0);
                    g.writeStringField("delta", piece);
                    g.writeStringField("item_id", itemId);
                    g.writeNumberField("output_index", outputIndex);
                });
            }
            case CONTENT -> {
                if (!piece.isEmpty()) {
                    move(out, State.CONTENT, plan);
                    contentDelta(out, piece);
                }
            }
            case ARGUMENTS -> {
                move(out, State.TOOL_CALL, plan);
                if (!piece.isEmpty()) {
                    accumulated.append(piece);
                    event(out, "response.function_call_arguments.delta", g -> {
                        g.writeStringField("delta", piece);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
                    });
                }
            }
            case SILENT -> {
                if (plan.visible(i)) {
                    move(out, State.TOOL_CALL, plan); // Hermes' name-only delta opens the call
                }
            }
        }
    }

    @Override
    public void finish(ByteBuf out, Choice c, boolean withTruth) {
        String held = c.releaseHeld();
        if (!held.isEmpty()) {
            move(out, State.CONTENT, c.plan);
            contentDelta(out, held);
        }
    }

    @Override
    public void usage(ByteBuf out) {
    }

    @Override
    public void done(ByteBuf out) {
        close(out);
        Json.inMemory(() -> responseEvent(new ByteBufOutputStream(out), "response.completed", true));
    }

    /** An event carrying the whole response object, in progress or finished (with the ground truth). */
    private void responseEvent(OutputStream out, String type, boolean finished) throws IOException {
        int seq = sequence++;
        Json.event(out, type, g -> {
            g.writeFieldName("response");
            object.write(g, finished, finished);
            g.writeNumberField("sequence_number", seq);
            g.writeStringField("type", type);
        });
    }

    private void contentDelta(ByteBuf out, String piece) {
        accumulated.append(piece);
        event(out, "response.output_text.delta", g -> {
            g.writeNumberField("content_index", 0);
            g.writeStringField("delta", piece);
            g.writeStringField("item_id", itemId);
            g.writeArrayFieldStart("logprobs");
            g.writeEndArray();
            g.writeNumberField("output_index", outputIndex);
        });
    }

    /** Closes the open item and opens one of {@code target}, unless it is open already. */
    private void move(ByteBuf out, State target, OutputPlan plan) {
        if (state == target) {
            return;
        }
        close(out);
        state = target;
        accumulated.setLength(0);
        itemId = object.response().derivedId(outputIndex);
        switch (target) {
            case CONTENT -> {
                itemEvent(out, "response.output_item.added", g -> ResponseObject.message(g, itemId, "", "in_progress"));
                partEvent(out, "response.content_part.added", g -> {
                    g.writeObjectFieldStart("part");
                    g.writeArrayFieldStart("annotations");
                    g.writeEndArray();
                    g.writeStringField("text", "");
                    g.writeStringField("type", "output_text");
                    g.writeArrayFieldStart("logprobs");
                    g.writeEndArray();
                    g.writeEndObject();
                });
            }
            case REASONING -> {
                itemEvent(out, "response.output_item.added", g -> {
                    g.writeStartObject();
                    g.writeStringField("id", itemId);
                    g.writeArrayFieldStart("summary");
                    g.writeEndArray();
                    g.writeStringField("type", "reasoning");
                    g.writeNullField("content");
                    g.writeNullField("encrypted_content");
                    g.writeStringField("status", "in_progress");
                    g.writeEndObject();
                });
                partEvent(out, "response.reasoning_part.added", g -> reasoningPart(g, ""));
            }
            case TOOL_CALL -> itemEvent(out, "response.output_item.added",
                    g -> ResponseObject.functionCall(g, itemId, plan.toolCallId, plan.toolName, "", "in_progress"));
            default -> { }
        }
    }

    private void close(ByteBuf out) {
        String text = accumulated.toString();
        OutputPlan plan = object.c().plan;
        switch (state) {
            case CONTENT -> {
                event(out, "response.output_text.done", g -> {
                    g.writeNumberField("content_index", 0);
                    g.writeStringField("item_id", itemId);
                    g.writeArrayFieldStart("logprobs");
                    g.writeEndArray();
                    g.writeNumberField("output_index", outputIndex);
                    g.writeStringField("text", text);
                });
                partEvent(out, "response.content_part.done", g -> {
                    g.writeFieldName("part");
                    ResponseObject.outputText(g, text);
                });
                itemEvent(out, "response.output_item.done", g -> ResponseObject.message(g, itemId, text, "completed"));
            }
            case REASONING -> {
                partEvent(out, "response.reasoning_text.done", g -> g.writeStringField("text", text));
                partEvent(out, "response.reasoning_part.done", g -> reasoningPart(g, text));
                itemEvent(out, "response.output_item.done", g -> ResponseObject.reasoningItem(g, itemId, text, "completed"));
            }
            case TOOL_CALL -> {
                if (!text.isEmpty()) {
                    event(out, "response.function_call_arguments.done", g -> {
                        g.writeStringField("arguments", text);
                        g.writeStringField("item_id", itemId);
                        g.writeStringField("name", plan.toolName);
                        g.writeNumberField("output_index", outputIndex);
                    });
                }
                itemEvent(out, "response.output_item.done",
                        g -> ResponseObject.functionCall(g, itemId, plan.toolCallId, plan.toolName, text, "completed"));
            }
            default -> {
                return;
            }
        }
        outputIndex++;
        state = State.NONE;
    }

    /** {@code response.output_item.added} or {@code .done}: the open item, written by {@code item}, and its index. */
    private void itemEvent(ByteBuf out, String type, Json.Writer item) {
        event(out, type, g -> {
            g.writeFieldName("item");
            item.write(g);
            g.writeNumberField("output_index", outputIndex);
        });
    }

    /** An event of the open item's one part: the part's and the item's place, then {@code fields}. */
    private void partEvent(ByteBuf out, String type, Json.Writer fields) {
        event(out, type, g -> {
            g.writeNumberField("content_index", 0);
            g.writeStringField("item_id", itemId);
            g.writeNumberField("output_index", outputIndex);
            fields.write(g);
        });
    }

    private static void reasoningPart(JsonGenerator g, String text) throws IOException {
        g.writeObjectFieldStart("part");
        g.writeStringField("text", text);
        g.writeStringField("type", "reasoning_text");
        g.writeEndObject();
    }

    private void event(ByteBuf out, String type, Json.Writer fields) {
        int seq = sequence++;
        Json.event(out, type, g -> {
            fields.write(g);
            g.writeNumberField("sequence_number", seq);
            g.writeStringField("type", type);
        });
    }
}
