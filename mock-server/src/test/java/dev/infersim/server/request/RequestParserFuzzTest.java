package dev.infersim.server.request;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.text.PromptTokenizer;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing (Jazzer) of the server's request reading: for any body, of any bytes, the parser either
 * accepts it or refuses it with an OpenAI error (400, or 404 for an unknown model), never with another exception,
 * which the HTTP layer would turn into a 500.
 *
 * <p>{@code mvn verify} replays the seeds under {@code src/test/resources/dev/infersim/server/request/RequestParserFuzzTestInputs}
 * (regression mode). {@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} (CI: {@code .ci/run}); see
 * mock-server/README.md for a longer run.
 */
class RequestParserFuzzTest {
    private static final RequestParser PARSER = new RequestParser(new PromptTokenizer(), List.of("llama-3.1-8b"), null, 8192, true);

    @FuzzTest(maxDuration = "10s")
    void everyBodyIsAcceptedOrRefusedWithAnOpenAiError(FuzzedDataProvider data) {
        boolean chat = data.consumeBoolean();
        byte[] body = data.consumeRemainingAsBytes();
        try {
            PARSER.parse(RequestParser.object(body), chat);
        } catch (ApiException e) {
            assertTrue(e.status == 400 || e.status == 404, e.status + " " + e.getMessage());
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "an error says why");
        }
    }
}
