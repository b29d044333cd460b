package dev.infersim.server.api.openai;

import dev.infersim.server.config.FaultType;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.ChoiceSink;
import dev.infersim.server.engine.EngineLoop;
import dev.infersim.server.engine.ExchangeFault;
import dev.infersim.server.engine.KvTransferConnector;
import dev.infersim.server.http.Attempts;
import dev.infersim.server.http.ResponseOutputStream;
import dev.infersim.server.model.Choices;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.model.ResponseTruth;
import dev.infersim.server.request.CompletionRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.internal.buffer.BufferInternal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * One completion request on its event loop, from submission to the last byte: hands its choices ({@link Choices}) to
 * the engine, then writes what the engine thread hands over, as SSE chunks ({@link SseEncoder}) or one JSON body
 * ({@link WholeBody}), applying the request's injected fault ({@link ExchangeFault}) on the way. A client that goes away
 * aborts its choices in the engine. Everything here runs on the exchange's event loop.
 */
public final class CompletionExchange implements ChoiceSink {
    /**
     * Token chunks of one stream written in one event-loop turn, its choices together: when the engine has run ahead of
     * a stream (a fast time scale, a slow reader), the rest waits behind the loop's other connections rather than
     * holding them up. Each choice gets its share (at least one chunk), so that a turn of {@code n: 999} with
     * {@code top_logprobs: 20} writes hundreds of kilobytes, not hundreds of megabytes.
     */
    private static final int TOKENS_PER_TURN = 256;
    /** This stream's share of {@link #TOKENS_PER_TURN} per choice. */
    private final int tokensPerChoiceTurn;
    private final ModelService service;
    /** The pinned data-parallel rank, or -1 for the load balancer's choice. */
    private final int pinnedRank;
    /** The engine serving this exchange; set by {@link #submit()}. */
    private EngineLoop loop;
    private final ResponseTruth truth;
    private final CompletionRequest request;
    private final HttpServerResponse response;
    private final Context context;
    /** Worker threads that write what is too large to write on the event loop. */
    private final WorkerExecutor bodies;
    private final ExchangeFault fault;
    private final Choice[] choices;
    private final Wire wire;
    private final Wire.Stream sse;
    private final Wire.Body body;
    private int finishedChoices;
    private int tokensSent;
    private boolean headWritten;
    private boolean done;
    /** A stall, a held first token or a worker writing: nothing is written here until that ends. */
    private boolean holding;
    private final String requestId;
    /** What a worker thread is writing into the response, or null. */
    private ResponseOutputStream offLoop;

    public CompletionExchange(ModelService service, int pinnedRank, CompletionRequest request, HttpServerResponse response, Context context,
             WorkerExecutor bodies, String requestId, Choices.Output[] outputs, FaultType fault, Wire wire) {
        this.service = service;
        this.pinnedRank = pinnedRank;
        this.request = request;
        this.response = response;
        this.context = context;
        this.bodies = bodies;
        this.fault = new ExchangeFault(fault, service.faults());
        this.requestId = requestId;
        this.wire = wire;
        this.choices = Choices.create(service, request, this, outputs, service.batchFor(context));
        this.tokensPerChoiceTurn = Math.max(1, TOKENS_PER_TURN / choices.length);
        ResponseContext answer = ResponseContext.open(service, wire, request, requestId, choices);
        this.truth = answer.truth();
        this.sse = request.stream() ? wire.stream(answer) : null;
        this.body = request.stream() ? null : wire.body(answer);
    }

    /**
     * Model time at which the request's head was read, before its body was parsed (the truth log's {@code received_ms}),
     * and the bound on how long it waited in the socket before that, wall ns (-1: unknown).
     */
    public void receivedAt(long modelNanos, long latenessWallNanos) {
        truth.receivedAt(modelNanos, latenessWallNanos);
    }

    /** Which attempt of the client's request this is ({@link Attempts}), for the ground truth. */
    public void attempt(int n) {
        truth.attempt(n);
    }

    /** The front door's routing decision (a JSON object), for the truth log. */
    public void routedBy(String decision) {
        truth.routedBy(decision);
    }

    /**
     * Whether each token must reach the event loop: a stream writes it, and a non-stream disconnect fault counts tokens
     * to drop the connection mid-generation. Other non-stream exchanges need only the finish.
     */
    @Override
    public boolean wantsTokens() {
        return request.stream() || fault.countsTokens();
    }

    @Override
    public boolean streams() {
        return request.stream();
    }

    @Override
    public int choiceCount() {
        return choices.length;
    }

    /** The request's id ({@code x-request-id}, or one the server made). */
    @Override
    public String requestId() {
        return requestId;
    }

    /** Reserves waiting slots and hands the choices to the engine; false (nothing submitted) when the queue is full. */
    public boolean submit() {
        loop = service.reserveEngine(pinnedRank, choices.length);
        KvTransferConnector kv = service.kvConnector;
        for (Choice c : choices) {
            if (kv != null && c.remotePrefill != null) {
                if (loop == null) {
                    kv.pullDone(c, 0); // refused: the prefill side may free its blocks now, as vLLM tells it
                } else {
                    kv.awaitingPull(c);
                }
            }
        }
        if (loop == null) {
            return false;
        }
        truth.servedByEngine(loop.rank());
        loop.submit(choices);
        service.activeExchanges.incrementAndGet();
        response.closeHandler(v -> clientGone());
        if (loop.deathCause() != null) {
            failed(null, "the engine has stopped"); // it may be gone before it could fail these choices
        }
        return true;
    }

    /** Engine thread: the injected {@link FaultType#ENGINE_ERROR} throws once the engine has produced {@code tokens}. */
    @Override
    public void engineFault(int tokens) {
        fault.failEngineAt(tokens);
    }

    private void clientGone() {
        if (offLoop != null) {
            offLoop.abort();
        }
        if (!done) {
            abortAll();
        }
    }

    /** Resets the connection and aborts every choice still in the engine (abortAll first: clientGone would skip them). */
    private void dropConnection() {
        abortAll();
        response.reset();
    }

    private void abortAll() {
        finish();
        for (Choice c : choices) {
            loop.abort(c);
        }
    }

    private void finish() {
        done = true;
        service.activeExchanges.decrementAndGet();
    }

    /** Event loop: the engine published tokens or a finish for {@code c}. */
    @Override
    public void deliver(Choice c) {
        if (done) {
            return;
        }
        if (request.stream()) {
            if (!c.catchingUp) {
                deliverStream(c);
            }
        } else {
            deliverWhole(c);
        }
    }

    /**
     * The engine failed the request ({@code c}, or every choice when it stopped): the other choices are aborted, the
     * failed one gets its truth row, and the client a 500, or, where its stream has begun, the tokens produced before
     * the failure, then an error event and {@code [DONE]}, as vLLM streams an error.
     */
    private void failed(Choice c, String why) {
        if (c != null && !c.finishHandled) {
            c.finishHandled = true;
            truth.finished(c);
        }
        abortAll();
        String error = wire.error(500, "Internal server error: " + why, null, "InternalServerError");
        if (!headWritten) {
            response.setStatusCode(500).putHeader("content-type", "application/json").end(error);
            return;
        }
        ByteBuf out = Unpooled.buffer(1024);
        if (c != null && (c.roleSent || !request.chat())) {
            int emitted = Choice.emitted(c.published());
            while (c.written < emitted) {
                sse.token(out, c, c.written++, false, false);
            }
        }
        out.writeCharSequence("data: " + error + "\n\ndata: [DONE]\n\n", StandardCharsets.UTF_8);
        response.end(BufferInternal.buffer(out));
    }

    private void deliverWhole(Choice c) {
        int published = c.published();
        if (Choice.finished(published) && c.failure() != null) {
            failed(c, c.failure());
            return;
        }
        if (fault.dropsWhole(Choice.emitted(published), Choice.finished(published))) {
            // Waiting for the whole generation made the fault a late reset counted as a 'length' success.
            dropConnection();
            return;
        }
        if (Choice.finished(published) && !c.finishHandled) {
            c.finishHandled = true;
            truth.finished(c);
            if (++finishedChoices == choices.length) {
                answerWhole();
            }
        }
    }

    private void deliverStream(Choice c) {
        if (holding) {
            return;
        }
        if (response.writeQueueFull()) {
            // The client reads slower than the engine generates: write on once it has caught up. Nothing piles up
            // meanwhile, since a token's text and timing are computed when it is written.
            response.drainHandler(v -> deliverAll());
            return;
        }
        // One snapshot of what the engine published for this turn: a failure seen finished is never written as a finish.
        int published = c.published();
        if (Choice.finished(published) && c.failure() != null) {
            failed(c, c.failure());
            return;
        }
        // A pooled direct buffer, given back once the socket has taken it: a heap Buffer per write was the largest
        // allocation of a busy server (young GCs stop the engine thread) and Netty copied it to a direct one anyway.
        int unsent = Choice.emitted(published) - c.written;
        ByteBuf bytes = PooledByteBufAllocator.DEFAULT.directBuffer(sse.capacityFor(c, Math.min(unsent, tokensPerChoiceTurn)));
        boolean ended = stream(c, bytes, published);
        if (!headWritten) {
            headWritten = true;
            response.setChunked(true).putHeader("content-type", "text/event-stream; charset=utf-8");
        }
        if (bytes.readableBytes() > 0) {
            Buffer out = BufferInternal.buffer(bytes);
            Future<Void> written = ended ? response.end(out) : response.write(out);
            written.onComplete(ar -> bytes.release());
        } else {
            bytes.release();
        }
        if (fault.dropsStream() && !done) {
            response.reset();
        } else if (!done && !holding && c.written < Choice.emitted(c.published())) {
            // more than a turn's worth waits behind the event loop's other work, or for the client to read
            if (response.writeQueueFull()) {
                response.drainHandler(v -> deliverAll());
            } else {
                c.catchingUp = true;
                context.runOnContext(v -> catchUp(c));
            }
        }
    }

    /** The next turn of a choice the engine ran ahead of; deliveries from the engine wait for it meanwhile. */
    private void catchUp(Choice c) {
        c.catchingUp = false;
        if (!done) {
            deliverStream(c);
        }
    }

    private void deliverAll() {
        for (Choice ch : choices) {
            deliver(ch);
        }
    }

    /** Appends every unsent event of {@code c} up to what {@code published} says; true when the response is complete. */
    private boolean stream(Choice c, ByteBuf out, int published) {
        boolean finished = Choice.finished(published);
        int emitted = Choice.emitted(published);
        long firstTokenHold = fault.firstTokenHoldMs(emitted);
        if (firstTokenHold >= 0) {
            hold(firstTokenHold);
            return false;
        }
        boolean startOffLoop = c.written == 0 && emitted > 0 && !c.roleSent && sse.largeStart(c);
        if (request.chat() && !c.roleSent && emitted > 0 && !startOffLoop) {
            c.roleSent = true;
            sse.role(out, c);
            if (request.echoMessage() != null) {
                sse.echoMessage(out, c);
            }
        }
        long turnNanos = -1;
        for (int turn = 0; turn < tokensPerChoiceTurn && c.written < emitted; turn++) {
            if (fault.interruptsAt(tokensSent)) {
                if (fault.stalls()) {
                    hold(fault.stallMs());
                }
                return false;
            }
            int i = c.written++;
            if (turnNanos < 0) {
                turnNanos = service.clock.modelNow(); // this turn's bytes go to the socket before the task ends
            }
            c.recordWritten(i, turnNanos);
            boolean last = finished && i == emitted - 1;
            boolean withTruth = last && finishedChoices + 1 == choices.length && !request.includeUsage();
            c.finalChunkSent = last;
            tokensSent++;
            if (i == 0 && startOffLoop) {
                c.roleSent = true;
                writeOffLoop(stream -> sse.start(stream, c, last, withTruth), false);
                return false;
            }
            sse.token(out, c, i, last, withTruth);
        }
        if (finished && !c.finishHandled && c.written == emitted) {
            c.finishHandled = true;
            truth.finished(c);
            boolean lastChoice = ++finishedChoices == choices.length;
            if (!c.finalChunkSent) {
                sse.finish(out, c, lastChoice && !request.includeUsage());
            }
            if (lastChoice) {
                if (request.includeUsage()) {
                    sse.usage(out);
                }
                finish();
                if (sse.largeEnd()) {
                    // what this turn wrote goes first, from the worker, so the end follows it in order
                    byte[] before = ByteBufUtil.getBytes(out);
                    out.clear();
                    writeOffLoop(stream -> {
                        stream.write(before);
                        sse.done(stream);
                    }, true);
                    return false;
                }
                sse.done(out);
                return true;
            }
        }
        return false;
    }

    private void hold(long wallMs) {
        holding = true;
        context.owner().setTimer(Math.max(1, wallMs), t -> {
            holding = false;
            deliverAll();
        });
    }

    /** Non-stream: the body once every choice is done, unless the fault drops or delays it. */
    private void answerWhole() {
        long delayMs = fault.bodyDelayMs();
        if (fault.dropsBody()) {
            dropConnection();
        } else if (delayMs >= 0) {
            context.owner().setTimer(Math.max(1, delayMs), t -> {
                if (!done) {
                    writeBody();
                }
            });
        } else {
            writeBody();
        }
    }

    private void writeBody() {
        finish();
        response.putHeader("content-type", "application/json");
        if (body.estimatedBytes() > ResponseOutputStream.OFF_LOOP_BYTES) {
            response.setChunked(true);
            writeOffLoop(body::write, true);
            return;
        }
        ByteBuf bytes = Unpooled.buffer(1024);
        body.write(bytes);
        response.end(BufferInternal.buffer(bytes));
    }

    /** What a worker thread writes into the response. */
    private interface OffLoopWrite {
        void write(OutputStream out) throws IOException;
    }

    /**
     * Has a worker thread write what {@code write} writes into the response, a chunk at a time as the client takes them
     * ({@link ResponseOutputStream}); this exchange writes nothing meanwhile. Then the response ends ({@code end}), or
     * the stream goes on with what the engine published meanwhile. A failure other than the client leaving (which
     * already aborted everything) resets the connection.
     */
    private void writeOffLoop(OffLoopWrite write, boolean end) {
        ResponseOutputStream out = new ResponseOutputStream(context, response);
        offLoop = out;
        holding = true;
        bodies.executeBlocking(() -> {
            try (out) {
                write.write(out);
            }
            return null;
        }, false).onComplete(ar -> {
            offLoop = null;
            holding = false;
            if (ar.failed()) {
                if (!response.closed()) {
                    if (!done) {
                        abortAll();
                    }
                    response.reset();
                }
            } else if (end) {
                response.end();
            } else {
                deliverAll();
            }
        });
    }
}
