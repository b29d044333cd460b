package dev.infersim.workload;

import dev.infersim.workload.length.EmpiricalLength;
import dev.infersim.workload.length.OutputLength;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;
import dev.infersim.common.JsonSyntax;
import dev.infersim.common.SplitMix64;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The ShareGPT dataset as {@code vllm bench serve --dataset-name sharegpt} uses it: a JSON array of
 * {@code {"id": ..., "conversations": [{"from": "human"|"gpt", "value": text}, ...]}}. As in vLLM
 * (vllm/benchmarks/datasets.py, ShareGPTDataset) a conversation needs at least two turns, and its turns 0 and 1 are
 * the prompt and the reply whatever their roles (a system turn first, or user/assistant names, change nothing), so the
 * same file gives the same requests; the reply's length is the request's max_tokens (or
 * {@code --sharegpt-output-len}). Where vLLM would crash (a first or second turn without a text {@code value}) the
 * file is refused, naming the line. As in vLLM (is_valid_sequence) a pair is
 * dropped when the prompt or the reply has fewer than 4 tokens (the reply check is skipped with a fixed output
 * length), the prompt more than 1024, or both together more than 2048. Requests take the conversations in a
 * seeded random order, and beyond the dataset's size draw conversations uniformly with replacement, as vLLM
 * oversamples.
 *
 * <p>Token counts come from a caller-supplied counter (the benchmark client passes its tokenizer); the default,
 * {@link #APPROXIMATE_TOKENS}, assumes 4 characters per token, the usual rule of thumb for English BPE text. The file
 * is parsed as a stream, holding only the kept prompts and the two lengths per conversation.
 */
public final class ShareGptDataset implements Dataset {

    /** ceil(characters / 4), at least 1: a tokenizer-free estimate for English text. */
    public static final ToIntFunction<String> APPROXIMATE_TOKENS = text -> Math.max(1, (text.length() + 3) / 4);

    static final int MIN_TOKENS = 4;
    static final int MAX_PROMPT_TOKENS = 1024;
    static final int MAX_TOTAL_TOKENS = 2048;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String[] prompts;
    private final int[] promptTokens;
    private final int[] maxTokens;
    private final OutputLength outputLength;

    private ShareGptDataset(String[] prompts, int[] promptTokens, int[] maxTokens, OutputLength outputLength) {
        this.prompts = prompts;
        this.promptTokens = promptTokens;
        this.maxTokens = maxTokens;
        this.outputLength = outputLength;
    }

    /**
     * Reads a ShareGPT JSON file.
     *
     * @param path              the JSON file
     * @param tokenCounter      counts a text's tokens
     * @param fixedOutputTokens {@code --sharegpt-output-len}, or 0 to use each reply's length
     * @param outputLength      the EOS rule
     * @throws ConfigException naming the file (and line) when it is missing, malformed or holds no usable pair
     */
    public static ShareGptDataset load(Path path, ToIntFunction<String> tokenCounter, int fixedOutputTokens,
                                       OutputLength outputLength) {
        DatasetPath.requireFile(path, "ShareGPT file");
        List<String> prompts = new ArrayList<>();
        IntList promptTokens = new IntList();
        IntList outputTokens = new IntList();
        try (JsonParser parser = JSON.getFactory().createParser(path.toFile())) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                throw new ConfigException(path + line(parser.currentLocation())
                        + ": a ShareGPT file is a JSON array of conversations");
            }
            for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
                String where = path + line(parser.currentLocation());
                if (token != JsonToken.START_OBJECT) {
                    throw new ConfigException(where + ": each ShareGPT entry is a JSON object with 'conversations'");
                }
                String[] pair = firstTwoTurns(parser.readValueAsTree(), where);
                if (pair == null) {
                    continue;
                }
                int prompt = tokenCounter.applyAsInt(pair[0]);
                int output = fixedOutputTokens > 0 ? fixedOutputTokens : tokenCounter.applyAsInt(pair[1]);
                if (isValid(prompt, output, fixedOutputTokens > 0)) {
                    prompts.add(pair[0]);
                    promptTokens.add(prompt);
                    outputTokens.add(output);
                }
            }
        } catch (JsonProcessingException e) {
            throw new ConfigException(path + JsonSyntax.location(e) + ": malformed ShareGPT JSON: "
                    + JsonSyntax.reason(e), e);
        } catch (IOException e) {
            throw new ConfigException("--dataset-path: cannot read " + path + ": " + e.getMessage(), e);
        }
        if (prompts.isEmpty()) {
            throw new ConfigException(path + ": no conversation of two or more turns is within vLLM's length "
                    + "limits (4..1024 prompt tokens, <= 2048 in total)");
        }
        return new ShareGptDataset(prompts.toArray(String[]::new), promptTokens.toArray(), outputTokens.toArray(),
                outputLength);
    }

    /**
     * Turns 0 and 1 of an entry's conversation, as vLLM takes them; null when vLLM skips the entry (no
     * {@code conversations} array, or fewer than two turns).
     */
    private static String[] firstTwoTurns(JsonNode entry, String where) {
        JsonNode conversations = entry.get("conversations");
        if (conversations == null || !conversations.isArray() || conversations.size() < 2) {
            return null;
        }
        String[] pair = new String[2];
        for (int t = 0; t < 2; t++) {
            JsonNode value = conversations.get(t).get("value");
            if (value == null || !value.isTextual()) {
                throw new ConfigException(where + ": turn " + t + " of the conversation has no text 'value' "
                        + "(a ShareGPT turn is {\"from\": ..., \"value\": text})");
            }
            pair[t] = value.asText();
        }
        return pair;
    }

    /** vLLM's is_valid_sequence with its default limits. */
    static boolean isValid(int promptTokens, int outputTokens, boolean fixedOutput) {
        return promptTokens >= MIN_TOKENS
                && (fixedOutput || outputTokens >= MIN_TOKENS)
                && promptTokens <= MAX_PROMPT_TOKENS
                && promptTokens + outputTokens <= MAX_TOTAL_TOKENS;
    }

    @Override
    public String name() {
        return WorkloadSpec.SHAREGPT;
    }

    /** Number of usable conversations. */
    public int conversations() {
        return prompts.length;
    }

    /** The empirical distribution of prompt lengths, in tokens. */
    public EmpiricalLength promptLengths() {
        return new EmpiricalLength(promptTokens);
    }

    /** The empirical distribution of reply lengths (or the fixed output length), in tokens. */
    public EmpiricalLength outputLengths() {
        return new EmpiricalLength(maxTokens);
    }

    @Override
    public Cursor cursor(long seed, long requests) {
        int[] order = shuffledOrder(new SplitMix64(SplitMix64.valueAt(seed, 2)));
        long contentBase = SplitMix64.valueAt(seed, 0);
        SplitMix64 rng = new SplitMix64(0);
        return (index, arrivalNanos) -> {
            rng.reseed(SplitMix64.valueAt(contentBase, index));
            int entry = index < order.length ? order[(int) index] : rng.nextInt(order.length);
            int output = outputLength.outputTokens(maxTokens[entry], rng);
            return new WorkloadRequest(index, arrivalNanos, promptTokens[entry], 0, -1, maxTokens[entry], output,
                    rng.nextLong(), 0L, false, WorkloadSpec.SHAREGPT, prompts[entry]);
        };
    }

    /** A Fisher-Yates shuffle of the conversation indices. */
    private int[] shuffledOrder(SplitMix64 rng) {
        int[] order = new int[prompts.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private static String line(JsonLocation location) {
        return location == null || location.getLineNr() < 0 ? "" : ":" + location.getLineNr();
    }
}
