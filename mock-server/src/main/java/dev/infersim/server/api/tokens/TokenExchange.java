package dev.infersim.server.api.tokens;

import dev.infersim.server.api.openai.CompletionExchange;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.ChoiceSink;
import dev.infersim.server.engine.EngineLoop;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.model.Choices;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.model.ResponseTruth;
import dev.infersim.server.model.TokenRequests;
import dev.infersim.server.request.CompletionRequest;
import io.vertx.core.Context;

/**
 * One request answered in token ids, on its event loop: vLLM's gRPC {@code Generate} and {@code /inference/v1/generate}.
 * It hands its choices to the engine as a {@link CompletionExchange} does and hands what the engine publishes to its
 * {@link Writer}: each choice's new token ids as they come, then its finish; each finished choice goes to the truth
 * log with its token ids ({@link ResponseTruth#answeredInTokenIds}). A client that goes away {@link #cancel}s it (the
 * engine aborts its choices, nothing more is written); vLLM's {@code Abort} {@link #abort}s it (the choices finish with
 * {@code abort}, which the writer still sends). Everything but {@link #abort} runs on the exchange's event loop.
 */
public final class TokenExchange implements ChoiceSink, TokenRequests.Running {

    /** Where the answer goes: a gRPC stream, an SSE stream or one JSON body. Called on the exchange's event loop. */
    public interface Writer {
        /**
         * Tokens {@code [from, to)} of {@code c} were generated ({@code c.text.id(i)}); {@code finished}: that was the
         * last of them and {@code c} is done ({@code c.finishName()}).
         */
        void tokens(Choice c, int from, int to, boolean finished);

        /** Every choice has finished: end the answer. */
        void done();

        /** Where the answer is written: while the peer has not taken what was, the exchange waits for it to drain. */
        io.vertx.core.streams.WriteStream<?> out();
    }

    private final ModelService service;
    private final String requestId;
    private final Choice[] choices;
    private final ResponseTruth truth;
    private final boolean streams;
    private final Context context;
    private Writer writer;
    private EngineLoop loop;
    private int finishedChoices;
    private boolean done;

    /**
     * @param api     the API answering, as the truth log names it ({@code grpc}, {@code generate})
     * @param streams whether the writer sends tokens as they come (else only finishes reach the event loop)
     */
    public TokenExchange(ModelService service, CompletionRequest request, String requestId, long seq, Context context, String api,
                  boolean streams) {
        this.service = service;
        this.requestId = requestId;
        this.streams = streams;
        this.context = context;
        this.choices = Choices.create(service, request, this, Choices.outputs(service, request, seq), service.batchFor(context));
        this.truth = new ResponseTruth(service, request, requestId, choices);
        truth.answeredInTokenIds(api);
    }

    /**
     * Reserves waiting slots on the engine {@code pinnedRank} names (-1: the load balancer's pick) and hands the choices
     * over; false (nothing submitted) when the queue is full. An {@link ApiException} (400) when a request of the same
     * id is running.
     */
    public boolean submit(int pinnedRank, Writer writer) {
        this.writer = writer;
        service.tokenRequests.started(this); // 400 for an id already running, before anything is reserved
        loop = service.reserveEngine(pinnedRank, choices.length);
        if (loop == null) {
            service.tokenRequests.ended(this);
            return false;
        }
        truth.servedByEngine(loop.rank());
        loop.submit(choices);
        service.activeExchanges.incrementAndGet();
        return true;
    }

    /** The front door's routing decision (a JSON object), for the truth log. */
    void routedBy(String decision) {
        truth.routedBy(decision);
    }

    @Override
    public void deliver(Choice c) {
        if (done) {
            return;
        }
        if (writer.out().writeQueueFull()) {
            writer.out().drainHandler(v -> deliverAll());
            return;
        }
        int published = c.published();
        int emitted = Choice.emitted(published);
        boolean finished = Choice.finished(published);
        if (c.written == emitted && (!finished || c.finishHandled)) {
            return; // delivered before: a choice may be in several of the engine's batches
        }
        int from = c.written;
        c.written = emitted;
        if (finished) {
            c.finishHandled = true;
            truth.finished(c);
            finishedChoices++;
        }
        writer.tokens(c, from, emitted, finished);
        if (finishedChoices == choices.length) {
            finish();
            writer.done();
        }
    }

    private void deliverAll() {
        for (Choice c : choices) {
            deliver(c);
        }
    }

    /** Event loop: the client went away; the engine aborts every choice and nothing more is written. */
    public void cancel() {
        if (!done) {
            finish();
            for (Choice c : choices) {
                loop.abort(c);
            }
        }
    }

    /** Any thread (vLLM's Abort): the engine aborts every choice, which then finish with {@code abort} as usual. */
    @Override
    public void abort() {
        context.runOnContext(v -> {
            if (!done) {
                for (Choice c : choices) {
                    loop.abort(c);
                }
            }
        });
    }

    private void finish() {
        done = true;
        service.activeExchanges.decrementAndGet();
        service.tokenRequests.ended(this);
    }

    @Override
    public boolean wantsTokens() {
        return streams;
    }

    @Override
    public boolean streams() {
        return streams;
    }

    @Override
    public int choiceCount() {
        return choices.length;
    }

    @Override
    public String requestId() {
        return requestId;
    }

    /** The choices, by index (prompts x n). */
    public Choice[] choices() {
        return choices;
    }
}
