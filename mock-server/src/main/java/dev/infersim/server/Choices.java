package dev.infersim.server;

import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineRequest;

/**
 * Turns a parsed completion request into its choices (prompts x n), each with the engine request that times it: the
 * output text (lorem from a derived seed, or the echoed prompt), the token budget and the EOS position. The engine request itself is made when the choice arrives at the engine ({@link Choice#arrive}). Everything is a pure function of the request, the server's seed and the request's sequence number.
 */
final class Choices {
    private Choices() {
    }

    static Choice[] create(ModelService service, CompletionRequest request, ChoiceSink exchange, long seq,
                           EventLoopBatch batch) {
        int perPrompt = request.n();
        Choice[] choices = new Choice[request.prompts().size() * perPrompt];
        for (int p = 0; p < request.prompts().size(); p++) {
            for (int j = 0; j < perPrompt; j++) {
                int index = p * perPrompt + j;
                choices[index] = create(service, request, exchange, index, p, seq, batch);
            }
        }
        return choices;
    }

    private static Choice create(ModelService service, CompletionRequest request, ChoiceSink exchange, int index, int promptIndex,
                                 long seq, EventLoopBatch batch) {
        ServerOptions o = service.options;
        int[] prompt = request.prompts().get(promptIndex);
        long textSeed = request.seed() != null ? request.seed() + index : SplitMix64.valueAt(o.seed(), seq * 1_000_003L + index);
        TokenText text = o.outputMode() == OutputMode.ECHO && request.echoIds().get(promptIndex).length > 0
                ? TokenText.echo(service.tokenizer, request.echoIds().get(promptIndex))
                : TokenText.lorem(service.vocabulary, textSeed);
        int room = service.capacity.maxModelLen() - prompt.length;
        // Echo with max_tokens 0 still runs one engine token, as vLLM does, and returns only the prompt.
        int maxTokens = request.maxTokens() == null ? room : Math.min(Math.max(1, request.maxTokens()), room);
        int minTokens = Math.min(request.minTokens(), maxTokens);
        int eos = request.ignoreEos() || o.eosPosition() == null ? EngineRequest.NO_EOS
                : o.eosPosition().sample(new SplitMix64(textSeed));
        DatasetReplies.Reply stored = o.datasetReplies() == null || o.outputMode() == OutputMode.ECHO ? null
                : o.datasetReplies().pick(prompt, maxTokens, request.ignoreEos(), textSeed);
        if (stored != null) {
            // the stored reply, which ends where it ends (unless ignore_eos runs the request on)
            text = TokenText.reply(stored.ids(), stored.pieces(), service.vocabulary, textSeed);
            eos = request.ignoreEos() ? EngineRequest.NO_EOS : Math.max(stored.length(), minTokens);
        }
        OutputPlan plan = request.chat() ? OutputPlan.draw(request.output(), o.features(), text, textSeed,
                Math.min(maxTokens, eos), service.tokenizer, service.vocabulary) : null;
        if (plan != null) {
            text = plan.text;
            eos = plan.eos(eos);
        }
        long id = service.nextEngineId();
        int eosAfterTokens = eos;
        // with a KV connector, kv_transfer_params make this a prefill to hold or a decode to pull (else vLLM ignores them)
        KvTransferParams kv = service.kvConnector == null ? null : KvTransferParams.parse(request.kvTransferParams());
        EngineRequest.Disaggregation role = kv == null ? EngineRequest.Disaggregation.NONE
                : kv.remotePrefill() ? EngineRequest.Disaggregation.REMOTE_PREFILL
                : kv.remoteDecode() ? EngineRequest.Disaggregation.REMOTE_DECODE : EngineRequest.Disaggregation.NONE;
        // Stop strings are matched on the engine thread as the text is generated (Choice.scanForStop), not here.
        Choice c = new Choice(exchange, index, arrival -> new EngineRequest(id, prompt.length, prompt, maxTokens, minTokens,
                eosAfterTokens, request.priority(), arrival, request.lora()).disaggregate(role), text, request.stops(), batch,
                request.tokenTimes() || o.truthLog() != null, plan);
        if (o.datasetReplies() != null) {
            c.reply = stored != null ? "dataset" : "synthetic";
        }
        if (role == EngineRequest.Disaggregation.REMOTE_PREFILL) {
            c.remotePrefill = kv;
        } else if (role == EngineRequest.Disaggregation.REMOTE_DECODE) {
            c.kvRequestId = exchange.requestId() + "-" + id; // vLLM's remote_request_id is its internal request id
        }
        return c;
    }
}
