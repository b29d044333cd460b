package dev.infersim.server.model;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.common.TextKey;
import dev.infersim.engine.EngineRequest;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.ModelClock;
import dev.infersim.server.http.Attempts;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.request.CompletionRequest;

import java.io.IOException;

/**
 * The {@code infersim} field of a response's last chunk (or its body): which replica and engine served the request, on
 * which LoRA adapter ({@code lora}, null for the base model), and the server's own timeline of every choice, in model
 * time (what the modelled GPU takes; ms since server start) and wall time (Unix epoch ms for instants, wall ms for
 * durations = model ms / time scale). With prefill/decode disaggregation a choice also tells its part: {@code kv_transfer}
 * names the prefill it pulled from and the tokens pulled (and its timeline the pull's start, end and length), or the
 * blocks it held for a decode side.
 */
public final class ResponseTruth {
    private final String requestId;
    private final CompletionRequest request;
    private final Choice[] choices;
    private final int replica;
    private final ModelClock clock;
    private final TruthLog log;
    private int engine;
    /** Which attempt of the client's request this was ({@link Attempts}); 0 where not counted. */
    private int attempt;
    /** Model time at which the request's head was read (before parsing and tokenizing); -1 where unknown. */
    private long receivedNanos = -1;
    /** Model nanoseconds the head can have waited in the socket before that (the event loop's read bound); -1 unknown. */
    private long receivedLatenessNanos = -1;
    /** The front door's routing decision, a JSON object; null when no front door routed the request. */
    private volatile String route;
    /** The API that answered in token ids ({@code grpc}, {@code generate}), whose rows carry them; null otherwise. */
    private String tokenApi;

    public ResponseTruth(ModelService service, CompletionRequest request, String requestId, Choice[] choices) {
        this.requestId = requestId;
        this.request = request;
        this.choices = choices;
        this.replica = service.options.replica();
        this.clock = service.clock;
        this.log = service.options.truthLog();
    }

    /** Event loop: {@code c} finished (seen through its published state); hands it to the truth log, if any. */
    public void finished(Choice c) {
        if (log != null) {
            log.offer((g, seq) -> writeRow(g, seq, c));
        }
    }

    /** Truth-log writer thread: one JSON Lines row for choice {@code c}, numbered {@code seq}. */
    void writeRow(JsonGenerator g, long seq, Choice c) throws IOException {
        g.writeStartObject();
        g.writeNumberField("seq", seq);
        g.writeStringField("request_id", requestId);
        g.writeNumberField("replica", replica);
        g.writeNumberField("engine", engine);
        writeLora(g);
        g.writeNumberField("time_scale", clock.timeScale());
        writeAttempt(g);
        if (route != null) {
            g.writeFieldName("route");
            g.writeRawValue(route);
        }
        if (tokenApi != null) {
            g.writeStringField("api", tokenApi);
        }
        choiceFields(g, c, true);
        // The output text's identity, so that check-harness can match a harness's saved text to this row exactly.
        g.writeStringField("output_text_sha256", TextKey.of(c.plan == null ? c.finalText()
                : c.plan.content(c.request.outputTokens(), c.stopTextLength())));
        // The prompt's, so that a request sent twice (a duplicate, not a retry) can be told from one refused first.
        g.writeStringField("prompt_sha256", TextKey.ofTokens(c.request.promptTokenIds()));
        if (tokenApi != null) {
            // what the client was sent, so a token-id client can be checked id by id
            g.writeArrayFieldStart("token_ids");
            for (int i = 0; i < c.request.outputTokens(); i++) {
                g.writeNumber(c.text.id(i));
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    /**
     * The request is answered in token ids by {@code api} (before the exchange starts): its truth-log rows name the API
     * and carry each choice's output token ids.
     */
    public void answeredInTokenIds(String api) {
        tokenApi = api;
    }

    /** The decision of the front door that routed the request here ({@code x-infersim-route}), a JSON object. */
    public void routedBy(String decision) {
        route = decision;
    }

    /**
     * Event loop, before the exchange is submitted: the request's head was read at model time {@code modelNanos}, having
     * waited at most {@code latenessWallNanos} (wall; -1 unknown) in the socket.
     */
    public void receivedAt(long modelNanos, long latenessWallNanos) {
        receivedNanos = modelNanos;
        receivedLatenessNanos = latenessWallNanos < 0 ? -1 : (long) (latenessWallNanos * clock.timeScale());
    }

    /** Event loop, before the exchange is submitted: this is attempt {@code n} of the client's request. */
    public void attempt(int n) {
        attempt = n;
    }

    /** The data-parallel rank of the engine that took the request. */
    public void servedByEngine(int rank) {
        engine = rank;
    }

    public void writeField(JsonGenerator g) throws IOException {
        g.writeObjectFieldStart("infersim");
        g.writeStringField("request_id", requestId);
        g.writeNumberField("replica", replica);
        g.writeNumberField("engine", engine);
        writeLora(g);
        g.writeNumberField("time_scale", clock.timeScale());
        writeAttempt(g);
        g.writeArrayFieldStart("choices");
        for (Choice c : choices) {
            g.writeStartObject();
            choiceFields(g, c, request.tokenTimes()); // the request's infersim.token_times
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** How many times the servers were asked to answer the client's request, this attempt included; null if not counted. */
    private void writeAttempt(JsonGenerator g) throws IOException {
        if (attempt > 0) {
            g.writeNumberField("attempt", attempt);
        } else {
            g.writeNullField("attempt");
        }
    }

    /** The LoRA adapter the request ran on; null for the base model. */
    private void writeLora(JsonGenerator g) throws IOException {
        if (request.lora() == null) {
            g.writeNullField("lora");
        } else {
            g.writeStringField("lora", request.lora().name());
        }
    }

    private void choiceFields(JsonGenerator g, Choice c, boolean tokenTimes) throws IOException {
        EngineRequest r = c.request;
        g.writeNumberField("index", c.index);
        g.writeNumberField("prompt_tokens", r.promptTokens());
        g.writeNumberField("cached_prompt_tokens", Math.max(0, r.cachedPromptTokens()));
        g.writeNumberField("completion_tokens", r.outputTokens());
        g.writeStringField("finish_reason", c.finishName());
        g.writeNumberField("preemptions", r.preemptions());
        if (c.reply != null) {
            g.writeStringField("reply", c.reply);
        }
        kvTransfer(g, c);
        g.writeObjectFieldStart("model");
        timeline(g, c, 1e6, false, tokenTimes);
        g.writeEndObject();
        g.writeObjectFieldStart("wall");
        timeline(g, c, 1e6 * clock.timeScale(), true, tokenTimes);
        g.writeEndObject();
    }

    private static void kvTransfer(JsonGenerator g, Choice c) throws IOException {
        Choice.HeldKv held = c.heldKv();
        if (c.remotePrefill != null) {
            g.writeObjectFieldStart("kv_transfer");
            g.writeStringField("role", "pull");
            g.writeStringField("remote_engine_id", c.remotePrefill.remoteEngineId());
            g.writeStringField("remote_request_id", c.remotePrefill.remoteRequestId());
            g.writeNumberField("tokens", c.request.kvTransferTokens());
            g.writeEndObject();
        } else if (held != null) {
            g.writeObjectFieldStart("kv_transfer");
            g.writeStringField("role", "hold");
            g.writeStringField("engine_id", held.engineId());
            g.writeStringField("request_id", held.requestId());
            g.writeNumberField("blocks", held.blockIds().length);
            g.writeEndObject();
        }
    }

    private void timeline(JsonGenerator g, Choice c, double nanosPerMs, boolean epoch, boolean tokenTimes) throws IOException {
        EngineRequest r = c.request;
        instant(g, "arrival_ms", r.arrivalNanos(), nanosPerMs, epoch);
        instant(g, "scheduled_ms", r.firstScheduledNanos(), nanosPerMs, epoch);
        instant(g, "first_token_ms", r.firstTokenNanos(), nanosPerMs, epoch);
        instant(g, "finished_ms", r.finishedNanos(), nanosPerMs, epoch);
        g.writeArrayFieldStart("preempted_ms");
        for (long t : c.preemptionTimes()) {
            g.writeNumber(ms(t, nanosPerMs, epoch));
        }
        g.writeEndArray();
        duration(g, "queue_time_ms", r.arrivalNanos(), r.firstScheduledNanos(), nanosPerMs);
        duration(g, "prefill_time_ms", r.firstScheduledNanos(), r.firstTokenNanos(), nanosPerMs);
        duration(g, "decode_time_ms", r.firstTokenNanos(), r.finishedNanos(), nanosPerMs);
        duration(g, "e2e_ms", r.arrivalNanos(), r.finishedNanos(), nanosPerMs);
        if (r.kvTransferStartNanos() >= 0) {
            instant(g, "kv_transfer_start_ms", r.kvTransferStartNanos(), nanosPerMs, epoch);
            instant(g, "kv_transfer_end_ms", r.kvTransferEndNanos(), nanosPerMs, epoch);
            duration(g, "kv_transfer_ms", r.kvTransferStartNanos(), r.kvTransferEndNanos(), nanosPerMs);
        }
        wire(g, c, nanosPerMs, epoch);
        long[] times = tokenTimes ? c.tokenTimes() : null;
        if (times != null) {
            g.writeArrayFieldStart("token_times_ms");
            for (long t : times) {
                g.writeNumber(ms(t, nanosPerMs, epoch));
            }
            g.writeEndArray();
            long[] written = c.writtenTimes();
            if (written != null) {
                g.writeArrayFieldStart("token_written_ms");
                long lateness = 0;
                for (int i = 0; i < written.length; i++) {
                    g.writeNumber(ms(written[i], nanosPerMs, epoch));
                    lateness = Math.max(lateness, written[i] - times[i]);
                }
                g.writeEndArray();
                g.writeNumberField("write_lateness_max_ms", lateness / nanosPerMs);
            }
        }
    }

    /**
     * The truth at the wire beside the planned instants: when the request's head was read (before its body was parsed
     * and tokenized; {@code ingest_ms} from there to the engine's arrival) and how long at most it had waited in the
     * socket before that ({@code received_lateness_ms}, the event loop's own bound), and when the chunks of the first
     * and the last token were handed to the connection (streams only; null for a body written whole).
     */
    private void wire(JsonGenerator g, Choice c, double nanosPerMs, boolean epoch) throws IOException {
        instant(g, "received_ms", receivedNanos, nanosPerMs, epoch);
        duration(g, "received_lateness_ms", 0, receivedLatenessNanos, nanosPerMs);
        duration(g, "ingest_ms", receivedNanos, c.request.arrivalNanos(), nanosPerMs);
        instant(g, "first_token_written_ms", c.firstWrittenNanos(), nanosPerMs, epoch);
        instant(g, "last_token_written_ms", c.lastWrittenNanos(), nanosPerMs, epoch);
    }

    private double ms(long modelNanos, double nanosPerMs, boolean epoch) {
        return epoch ? clock.toEpochMillis(modelNanos) : modelNanos / nanosPerMs;
    }

    private void instant(JsonGenerator g, String key, long nanos, double nanosPerMs, boolean epoch) throws IOException {
        if (nanos < 0) {
            g.writeNullField(key);
        } else {
            g.writeNumberField(key, ms(nanos, nanosPerMs, epoch));
        }
    }

    private static void duration(JsonGenerator g, String key, long from, long to, double nanosPerMs) throws IOException {
        if (from < 0 || to < 0) {
            g.writeNullField(key);
        } else {
            g.writeNumberField(key, (to - from) / nanosPerMs);
        }
    }
}
