package dev.infersim.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.internal.buffer.BufferInternal;

/**
 * One completion request on its event loop, from submission to the last byte: hands its choices ({@link Choices}) to
 * the engine, then writes what the engine thread hands over, as SSE chunks ({@link SseEncoder}) or one JSON body
 * ({@link WholeBody}), applying the request's injected fault ({@link ExchangeFault}) on the way. A client that goes away
 * aborts its choices in the engine. Everything here runs on the exchange's event loop.
 */
final class Exchange {
    private final ModelService service;
    /** The pinned data-parallel rank, or -1 for the load balancer's choice. */
    private final int pinnedRank;
    /** The engine serving this exchange; set by {@link #submit()}. */
    private EngineLoop loop;
    private final GroundTruth truth;
    private final CompletionRequest request;
    private final HttpServerResponse response;
    private final Context context;
    private final ExchangeFault fault;
    private final Choice[] choices;
    private final Wire.Stream sse;
    private final Wire.Body body;
    private int finishedChoices;
    private int tokensSent;
    private boolean headWritten;
    private boolean done;
    /** A stall or a held first token: nothing is written until its timer ends it. */
    private boolean holding;

    Exchange(ModelService service, int pinnedRank, CompletionRequest request, HttpServerResponse response, Context context,
             String requestId, long seq, FaultType fault, Wire wire) {
        this.service = service;
        this.pinnedRank = pinnedRank;
        this.request = request;
        this.response = response;
        this.context = context;
        this.fault = new ExchangeFault(fault, service.faults.get());
        this.choices = Choices.create(service, request, this, seq, service.batchFor(context));
        String id = wire.id(request, requestId);
        long created = System.currentTimeMillis() / 1000;
        // vLLM names the adapter a request ran on as its response's model
        String model = request.lora() != null ? request.lora().name() : service.options.servedModelName();
        Logprobs logprobs = new Logprobs(request, service.vocabulary);
        this.truth = new GroundTruth(requestId, service.options.replica(), request.lora(), service.clock, choices,
                request.tokenTimes(), service.options.truthLog());
        this.sse = request.stream() ? wire.stream(request, id, created, model, choices, logprobs, truth) : null;
        this.body = request.stream() ? null : wire.body(request, id, created, model, choices, logprobs, truth);
    }

    /** The front door's routing decision (a JSON object), for the truth log. */
    void routedBy(String decision) {
        truth.routedBy(decision);
    }

    /**
     * Whether each token must reach the event loop: a stream writes it, and a non-stream disconnect fault counts tokens
     * to drop the connection mid-generation. Other non-stream exchanges need only the finish.
     */
    boolean wantsTokens() {
        return request.stream() || fault.countsTokens();
    }

    boolean streams() {
        return request.stream();
    }

    int choiceCount() {
        return choices.length;
    }

    /** Reserves waiting slots and hands the choices to the engine; false (nothing submitted) when the queue is full. */
    boolean submit() {
        loop = service.reserveEngine(pinnedRank, choices.length);
        if (loop == null) {
            return false;
        }
        truth.servedByEngine(loop.rank());
        loop.submit(choices);
        service.activeExchanges.incrementAndGet();
        response.closeHandler(v -> clientGone());
        return true;
    }

    private void clientGone() {
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
    void deliver(Choice c) {
        if (done) {
            return;
        }
        if (request.stream()) {
            deliverStream(c);
        } else {
            deliverWhole(c);
        }
    }

    private void deliverWhole(Choice c) {
        int published = c.published();
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
        // A pooled direct buffer, given back once the socket has taken it: a heap Buffer per write was the largest
        // allocation of a busy server (young GCs stop the engine thread) and Netty copied it to a direct one anyway.
        ByteBuf bytes = PooledByteBufAllocator.DEFAULT.directBuffer(sse.capacityFor(c, Choice.emitted(c.published()) - c.written));
        boolean ended = stream(c, bytes);
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
        }
    }

    /** Appends every unsent event of {@code c}; true when the response is complete. */
    private boolean stream(Choice c, ByteBuf out) {
        int published = c.published();
        boolean finished = Choice.finished(published);
        int emitted = Choice.emitted(published);
        long firstTokenHold = fault.firstTokenHoldMs(emitted);
        if (firstTokenHold >= 0) {
            hold(firstTokenHold);
            return false;
        }
        if (request.chat() && !c.roleSent && emitted > 0) {
            c.roleSent = true;
            sse.role(out, c);
            if (request.echoMessage() != null) {
                sse.echoMessage(out, c);
            }
        }
        while (c.written < emitted) {
            if (fault.interruptsAt(tokensSent)) {
                if (fault.stalls()) {
                    hold(fault.stallMs());
                }
                return false;
            }
            int i = c.written++;
            boolean last = finished && i == emitted - 1;
            sse.token(out, c, i, last, last && finishedChoices + 1 == choices.length && !request.includeUsage());
            c.finalChunkSent = last;
            tokensSent++;
        }
        if (finished && !c.finishHandled) {
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
                sse.done(out);
                finish();
                return true;
            }
        }
        return false;
    }

    private void hold(long wallMs) {
        holding = true;
        context.owner().setTimer(Math.max(1, wallMs), t -> {
            holding = false;
            for (Choice ch : choices) {
                deliver(ch);
            }
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
        ByteBuf bytes = Unpooled.buffer(1024);
        body.write(bytes);
        response.putHeader("content-type", "application/json").end(BufferInternal.buffer(bytes));
    }
}
