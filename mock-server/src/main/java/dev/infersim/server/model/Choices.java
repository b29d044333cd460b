package dev.infersim.server.model;

import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineRequest;
import dev.infersim.server.config.OutputMode;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.ChoiceSink;
import dev.infersim.server.engine.EventLoopBatch;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.output.OutputPlan;
import dev.infersim.server.output.SamplingBudget;
import dev.infersim.server.output.TokenText;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.text.DatasetReplies;

/**
 * Turns a parsed completion request into its choices (prompts x n), each with the engine request that times it: the
 * output text (lorem from a derived seed, or the echoed prompt), the token budget and the EOS position. The engine
 * request itself is made when the choice arrives at the engine ({@link Choice#arrive}). Everything is a pure function
 * of the request, the server's seed and the request's sequence number.
 *
 * <p>Drawing the outputs ({@link #outputs}) is the part whose cost a request sets: structured output (a JSON value per
 * choice, bounded by the request's {@link SamplingBudget}), many choices, long echoed prompts. Where it may cost more
 * than an event loop should spend ({@link #drawnOffLoop}), the routes draw them on a worker thread before the
 * exchange starts.
 */
public final class Choices {
    /** More choices than this are drawn on a worker thread. */
    static final int ON_LOOP_CHOICES = 16;
    /** Echoed prompt tokens (all prompts) past which the outputs are drawn on a worker thread. */
    static final int ON_LOOP_ECHO_TOKENS = 16_384;

    /**
     * What one choice generates: its output text (and plan, when shaped), where the model emits EOS, and where the text
     * came from under {@code --dataset-responses} ({@code dataset} or {@code synthetic}; null without it).
     */
    public record Output(TokenText text, OutputPlan plan, int eos, String reply) {
    }

    private Choices() {
    }

    /** Whether drawing {@code request}'s outputs may cost more than an event loop should spend at once. */
    public static boolean drawnOffLoop(ServerOptions o, CompletionRequest request) {
        if (request.chat() && request.output().shaped() || request.prompts().size() * request.n() > ON_LOOP_CHOICES) {
            return true;
        }
        if (o.outputMode() != OutputMode.ECHO) {
            return false;
        }
        long echoed = 0;
        for (int[] ids : request.echoIds()) {
            echoed += ids.length;
        }
        return echoed > ON_LOOP_ECHO_TOKENS;
    }

    /**
     * Each choice's output, in choice order; a 400 naming the limit when the request's structured output exceeds its
     * {@link SamplingBudget}. Pure and thread-safe: a worker thread may draw them.
     */
    public static Output[] outputs(ModelService service, CompletionRequest request, long seq) {
        ServerOptions o = service.options;
        SamplingBudget budget = new SamplingBudget();
        int perPrompt = request.n();
        Output[] out = new Output[request.prompts().size() * perPrompt];
        for (int p = 0; p < request.prompts().size(); p++) {
            int[] prompt = request.prompts().get(p);
            // the choices of one prompt echo the same text: its pieces are made once
            TokenText echo = o.outputMode() == OutputMode.ECHO && request.echoIds().get(p).length > 0
                    ? TokenText.echo(service.tokenizer, request.echoIds().get(p)) : null;
            int maxTokens = maxTokens(service, request, prompt);
            for (int j = 0; j < perPrompt; j++) {
                int index = p * perPrompt + j;
                long textSeed = textSeed(o, request, seq, index);
                TokenText text = echo != null ? echo : TokenText.lorem(service.vocabulary, textSeed);
                int eos = request.ignoreEos() || o.eosPosition() == null ? EngineRequest.NO_EOS
                        : o.eosPosition().sample(new SplitMix64(textSeed));
                DatasetReplies.Reply stored = o.datasetReplies() == null || o.outputMode() == OutputMode.ECHO ? null
                        : o.datasetReplies().pick(prompt, maxTokens, request.ignoreEos(), textSeed);
                if (stored != null) {
                    // the stored reply, which ends where it ends (unless ignore_eos runs the request on)
                    text = TokenText.reply(stored.ids(), stored.pieces(), service.vocabulary, textSeed);
                    eos = request.ignoreEos() ? EngineRequest.NO_EOS
                            : Math.max(stored.length(), Math.min(request.minTokens(), maxTokens));
                }
                String reply = o.datasetReplies() == null ? null : stored != null ? "dataset" : "synthetic";
                OutputPlan plan = request.chat() ? OutputPlan.draw(request.output(), o.features(), text, textSeed,
                        Math.min(maxTokens, eos), maxTokens, service.tokenizer, service.vocabulary, budget) : null;
                out[index] = plan == null ? new Output(text, null, eos, reply) : new Output(plan.text, plan, plan.eos(eos), reply);
            }
        }
        return out;
    }

    private static long textSeed(ServerOptions o, CompletionRequest request, long seq, int index) {
        return request.seed() != null ? request.seed() + index : SplitMix64.valueAt(o.seed(), seq * 1_000_003L + index);
    }

    /** The tokens a choice of {@code prompt} may generate: its max_tokens within what the context leaves. */
    private static int maxTokens(ModelService service, CompletionRequest request, int[] prompt) {
        int room = service.capacity.maxModelLen() - prompt.length;
        // Echo with max_tokens 0 still runs one engine token, as vLLM does, and returns only the prompt.
        return request.maxTokens() == null ? room : Math.min(Math.max(1, request.maxTokens()), room);
    }

    public static Choice[] create(ModelService service, CompletionRequest request, ChoiceSink exchange, Output[] outputs,
                           EventLoopBatch batch) {
        int perPrompt = request.n();
        Choice[] choices = new Choice[outputs.length];
        for (int p = 0; p < request.prompts().size(); p++) {
            for (int j = 0; j < perPrompt; j++) {
                int index = p * perPrompt + j;
                choices[index] = create(service, request, exchange, index, p, outputs[index], batch);
            }
        }
        return choices;
    }

    private static Choice create(ModelService service, CompletionRequest request, ChoiceSink exchange, int index, int promptIndex,
                                 Output output, EventLoopBatch batch) {
        ServerOptions o = service.options;
        int[] prompt = request.prompts().get(promptIndex);
        int maxTokens = maxTokens(service, request, prompt);
        int minTokens = Math.min(request.minTokens(), maxTokens);
        long id = service.nextEngineId();
        int eosAfterTokens = output.eos();
        // with a KV connector, kv_transfer_params make this a prefill to hold or a decode to pull (else vLLM ignores them)
        KvTransferParams kv = service.kvConnector == null ? null
                : KvTransferParams.parse(request.kvTransferParams(), service.kvConnector.config(), service.capacity.maxModelLen());
        EngineRequest.Disaggregation role = kv == null ? EngineRequest.Disaggregation.NONE
                : kv.remotePrefill() ? EngineRequest.Disaggregation.REMOTE_PREFILL
                : kv.remoteDecode() ? EngineRequest.Disaggregation.REMOTE_DECODE : EngineRequest.Disaggregation.NONE;
        // Stop strings are matched on the engine thread as the text is generated (Choice.scanForStop), not here.
        Choice c = new Choice(exchange, index, arrival -> new EngineRequest(id, prompt.length, prompt, maxTokens, minTokens,
                eosAfterTokens, request.priority(), arrival, request.lora()).disaggregate(role), output.text(), request.stops(), batch,
                request.tokenTimes() || o.truthLog() != null, output.plan());
        c.reply = output.reply();
        if (role == EngineRequest.Disaggregation.REMOTE_PREFILL) {
            c.remotePrefill = kv;
        } else if (role == EngineRequest.Disaggregation.REMOTE_DECODE) {
            c.kvRequestId = exchange.requestId() + "-" + id; // vLLM's remote_request_id is its internal request id
        }
        return c;
    }
}
