package dev.infersim.server;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.FinishReason;
import io.netty.buffer.ByteBuf;

import java.io.IOException;

/**
 * The Responses API's answer as vLLM writes it without Harmony (vLLM main at 9aaf83ef502fc37bc647f6e474314d48ba36cd1c):
 * the response object ({@code ResponsesResponse.from_request}, every field dumped) with its output items (a
 * {@code reasoning} item, a {@code message} with one {@code output_text}, {@code function_call} items), {@code status}
 * {@code incomplete} when max_output_tokens cut it, and usage with {@code reasoning_tokens} counted between the think
 * markers as vLLM's {@code count_reasoning_tokens} does. Streamed, it is vLLM's event sequence
 * ({@code SimpleStreamingEventProcessor}, {@code streaming_events.py}): {@code response.created},
 * {@code response.in_progress}, then per output item its added, part-added, delta, done events, and
 * {@code response.completed} carrying the whole response; each {@code event: TYPE\ndata: JSON}, numbered by
 * {@code sequence_number}. The response carries the {@code infersim} ground truth (in {@code response.completed} when
 * streamed).
 */
final class ResponsesEncoder {
    private ResponsesEncoder() {
    }

    /** The Responses format for one request; holds the original body, which the response object echoes. */
    static final class ResponsesWire implements Wire {
        private final ObjectNode body;

        ResponsesWire(ObjectNode body) {
            this.body = body;
        }

        @Override
        public String id(CompletionRequest request, String requestId) {
            String given = body.path("request_id").asText("");
            return given.isEmpty() ? "resp_" + requestId : given;
        }

        @Override
        public Stream stream(ResponseContext response) {
            return new EventStream(new ResponseObject(body, response));
        }

        @Override
        public Body body(ResponseContext response) {
            ResponseObject r = new ResponseObject(body, response);
            return out -> Json.write(out, g -> r.write(g, true, true));
        }
    }

    /** The response object of a request's one choice, in progress or finished; {@code req} the Responses body. */
    private record ResponseObject(ObjectNode req, ResponseContext response) {

        Choice c() {
            return response.choices()[0];
        }

        void write(JsonGenerator g, boolean finished, boolean withTruth) throws IOException {
            Choice c = c();
            int n = finished ? c.request.outputTokens() : 0;
            boolean incomplete = finished && c.request.finishReason() == FinishReason.LENGTH;
            g.writeStartObject();
            g.writeStringField("id", response.id());
            g.writeNumberField("created_at", response.created());
            if (incomplete) {
                g.writeObjectFieldStart("incomplete_details");
                g.writeStringField("reason", "max_output_tokens");
                g.writeEndObject();
            } else {
                g.writeNullField("incomplete_details");
            }
            echo(g, "instructions");
            echo(g, "metadata");
            g.writeStringField("model", response.model());
            g.writeStringField("object", "response");
            g.writeArrayFieldStart("output");
            if (finished) {
                outputItems(g, n);
            }
            g.writeEndArray();
            g.writeBooleanField("parallel_tool_calls", req.path("parallel_tool_calls").asBoolean(true));
            g.writeNumberField("temperature", req.path("temperature").asDouble(1.0));
            g.writeFieldName("tool_choice");
            g.writeTree(req.hasNonNull("tool_choice") ? req.get("tool_choice")
                    : Json.MAPPER.getNodeFactory().textNode(req.path("tools").isEmpty() ? "none" : "auto"));
            g.writeFieldName("tools");
            g.writeTree(req.has("tools") && req.get("tools").isArray() ? req.get("tools") : Json.MAPPER.createArrayNode());
            g.writeNumberField("top_p", req.path("top_p").asDouble(1.0));
            g.writeBooleanField("background", false);
            g.writeNumberField("max_output_tokens", c.request.maxTokens());
            echo(g, "max_tool_calls");
            g.writeNullField("previous_response_id");
            g.writeNullField("prompt");
            echo(g, "reasoning");
            g.writeStringField("service_tier", req.path("service_tier").asText("auto"));
            g.writeStringField("status", !finished ? "in_progress" : incomplete ? "incomplete" : "completed");
            echo(g, "text");
            g.writeNullField("top_logprobs");
            g.writeStringField("truncation", req.path("truncation").asText("disabled"));
            if (finished) {
                usage(g, n);
            } else {
                g.writeNullField("usage");
            }
            echo(g, "user");
            g.writeNumberField("presence_penalty", req.path("presence_penalty").asDouble(0.0));
            g.writeNumberField("frequency_penalty", req.path("frequency_penalty").asDouble(0.0));
            g.writeNullField("kv_transfer_params");
            g.writeNullField("input_messages");
            g.writeNullField("output_messages");
            if (withTruth) {
                response.truth().writeField(g);
            }
            g.writeEndObject();
        }

        private void echo(JsonGenerator g, String key) throws IOException {
            g.writeFieldName(key);
            JsonNode v = req.get(key);
            if (v == null) {
                g.writeNull();
            } else {
                g.writeTree(v);
            }
        }

        /** vLLM's parser path: a reasoning item, a message when there is content, the tool call; else one message. */
        private void outputItems(JsonGenerator g, int n) throws IOException {
            Choice c = c();
            String id = response.id();
            OutputPlan plan = c.plan;
            int keep = c.stopTextLength();
            if (plan == null) {
                message(g, "msg_" + id, c.finalText());
                return;
            }
            String reasoning = plan.reasoning(n, keep);
            if (reasoning != null && !reasoning.isEmpty()) {
                reasoningItem(g, "rs_" + id, reasoning, null); // only the last item has a status (vLLM's note)
            }
            String content = plan.content(n, keep);
            if (content != null && !content.isEmpty()) {
                message(g, "msg_" + id, content);
            }
            if (plan.listsCall(n)) {
                functionCall(g, "fc_" + id, plan.toolCallId, plan.toolName, plan.text(OutputPlan.Channel.ARGUMENTS, n, keep),
                        "completed");
            }
        }

        private void usage(JsonGenerator g, int n) throws IOException {
            Choice c = c();
            int input = c.request.promptTokens();
            g.writeObjectFieldStart("usage");
            g.writeNumberField("input_tokens", input);
            g.writeObjectFieldStart("input_tokens_details");
            g.writeNumberField("cached_tokens", Math.max(0, c.request.cachedPromptTokens()));
            g.writeArrayFieldStart("input_tokens_per_turn");
            g.writeEndArray();
            g.writeArrayFieldStart("cached_tokens_per_turn");
            g.writeEndArray();
            g.writeEndObject();
            g.writeNumberField("output_tokens", n);
            g.writeObjectFieldStart("output_tokens_details");
            // tokens strictly between <think> and </think>, markers not counted (count_reasoning_tokens)
            int reasoning = c.plan == null || c.plan.reasoningTokens == 0 ? 0 : Math.max(0, Math.min(n - 1, c.plan.reasoningTokens));
            g.writeNumberField("reasoning_tokens", reasoning);
            g.writeNumberField("tool_output_tokens", 0);
            g.writeArrayFieldStart("output_tokens_per_turn");
            g.writeEndArray();
            g.writeArrayFieldStart("tool_output_tokens_per_turn");
            g.writeEndArray();
            g.writeEndObject();
            g.writeNumberField("total_tokens", input + n);
            g.writeEndObject();
        }
    }

    static void reasoningItem(JsonGenerator g, String itemId, String text, String status) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", itemId);
        g.writeArrayFieldStart("summary");
        g.writeEndArray();
        g.writeStringField("type", "reasoning");
        g.writeArrayFieldStart("content");
        g.writeStartObject();
        g.writeStringField("text", text);
        g.writeStringField("type", "reasoning_text");
        g.writeEndObject();
        g.writeEndArray();
        g.writeNullField("encrypted_content");
        g.writeStringField("status", status);
        g.writeEndObject();
    }

    static void message(JsonGenerator g, String itemId, String text) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", itemId);
        g.writeArrayFieldStart("content");
        if (text != null && !text.isEmpty()) {
            outputText(g, text);
        }
        g.writeEndArray();
        g.writeStringField("role", "assistant");
        g.writeStringField("status", "completed");
        g.writeStringField("type", "message");
        g.writeEndObject();
    }

    private static void outputText(JsonGenerator g, String text) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart("annotations");
        g.writeEndArray();
        g.writeStringField("text", text);
        g.writeStringField("type", "output_text");
        g.writeNullField("logprobs");
        g.writeEndObject();
    }

    static void functionCall(JsonGenerator g, String itemId, String callId, String name, String arguments, String status)
            throws IOException {
        g.writeStartObject();
        g.writeStringField("arguments", arguments);
        g.writeStringField("call_id", callId);
        g.writeStringField("name", name);
        g.writeStringField("type", "function_call");
        g.writeStringField("id", itemId);
        g.writeStringField("status", status);
        g.writeEndObject();
    }

    /** vLLM's simple streaming state machine over one choice's tokens. */
    private static final class EventStream implements Wire.Stream {
        private static final int EVENT_BYTES = 384;

        private enum State { NONE, CONTENT, REASONING, TOOL_CALL }

        private final ResponseObject response;
        private int sequence;
        private int outputIndex;
        private State state = State.NONE;
        private String itemId;
        private final StringBuilder accumulated = new StringBuilder();

        EventStream(ResponseObject response) {
            this.response = response;
        }

        @Override
        public int capacityFor(Choice c, int tokens) {
            return Math.max(1, tokens) * EVENT_BYTES;
        }

        @Override
        public void role(ByteBuf out, Choice c) {
            event(out, "response.created", g -> {
                g.writeFieldName("response");
                response.write(g, false, false);
            });
            event(out, "response.in_progress", g -> {
                g.writeFieldName("response");
                response.write(g, false, false);
            });
        }

        @Override
        public void echoMessage(ByteBuf out, Choice c) {
        }

        @Override
        public void token(ByteBuf out, Choice c, int i, boolean last, boolean withTruth) {
            String piece = c.text.piece(i);
            OutputPlan plan = c.plan;
            OutputPlan.Channel channel = plan == null ? OutputPlan.Channel.CONTENT : plan.channel(i);
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
        }

        @Override
        public void usage(ByteBuf out) {
        }

        @Override
        public void done(ByteBuf out) {
            close(out);
            event(out, "response.completed", g -> {
                g.writeFieldName("response");
                response.write(g, true, true);
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
            itemId = String.format("%016x%016x", response.response().id().hashCode() * 0x9E3779B97F4A7C15L, (long) outputIndex);
            switch (target) {
                case CONTENT -> {
                    event(out, "response.output_item.added", g -> {
                        g.writeFieldName("item");
                        g.writeStartObject();
                        g.writeStringField("id", itemId);
                        g.writeArrayFieldStart("content");
                        g.writeEndArray();
                        g.writeStringField("role", "assistant");
                        g.writeStringField("status", "in_progress");
                        g.writeStringField("type", "message");
                        g.writeEndObject();
                        g.writeNumberField("output_index", outputIndex);
                    });
                    event(out, "response.content_part.added", g -> {
                        g.writeNumberField("content_index", 0);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
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
                    event(out, "response.output_item.added", g -> {
                        g.writeFieldName("item");
                        g.writeStartObject();
                        g.writeStringField("id", itemId);
                        g.writeArrayFieldStart("summary");
                        g.writeEndArray();
                        g.writeStringField("type", "reasoning");
                        g.writeNullField("content");
                        g.writeNullField("encrypted_content");
                        g.writeStringField("status", "in_progress");
                        g.writeEndObject();
                        g.writeNumberField("output_index", outputIndex);
                    });
                    event(out, "response.reasoning_part.added", g -> {
                        g.writeNumberField("content_index", 0);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
                        g.writeObjectFieldStart("part");
                        g.writeStringField("text", "");
                        g.writeStringField("type", "reasoning_text");
                        g.writeEndObject();
                    });
                }
                case TOOL_CALL -> event(out, "response.output_item.added", g -> {
                    g.writeFieldName("item");
                    functionCall(g, itemId, plan.toolCallId, plan.toolName, "", "in_progress");
                    g.writeNumberField("output_index", outputIndex);
                });
                default -> { }
            }
        }

        private void close(ByteBuf out) {
            String text = accumulated.toString();
            OutputPlan plan = response.c().plan;
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
                    event(out, "response.content_part.done", g -> {
                        g.writeNumberField("content_index", 0);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
                        g.writeFieldName("part");
                        outputText(g, text);
                    });
                    event(out, "response.output_item.done", g -> {
                        g.writeFieldName("item");
                        message(g, itemId, text);
                        g.writeNumberField("output_index", outputIndex);
                    });
                }
                case REASONING -> {
                    event(out, "response.reasoning_text.done", g -> {
                        g.writeNumberField("content_index", 0);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
                        g.writeStringField("text", text);
                    });
                    event(out, "response.reasoning_part.done", g -> {
                        g.writeNumberField("content_index", 0);
                        g.writeStringField("item_id", itemId);
                        g.writeNumberField("output_index", outputIndex);
                        g.writeObjectFieldStart("part");
                        g.writeStringField("text", text);
                        g.writeStringField("type", "reasoning_text");
                        g.writeEndObject();
                    });
                    event(out, "response.output_item.done", g -> {
                        g.writeFieldName("item");
                        reasoningItem(g, itemId, text, "completed");
                        g.writeNumberField("output_index", outputIndex);
                    });
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
                    event(out, "response.output_item.done", g -> {
                        g.writeFieldName("item");
                        functionCall(g, itemId, plan.toolCallId, plan.toolName, text, "completed");
                        g.writeNumberField("output_index", outputIndex);
                    });
                }
                default -> {
                    return;
                }
            }
            outputIndex++;
            state = State.NONE;
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
}
