package dev.infersim.bench.run;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StreamChunkTest {
    private final StreamChunk chunk = new StreamChunk();

    private boolean parse(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return chunk.parse(b, b.length);
    }

    @Test
    void finishReasonIsReadAsWrittenWithOrWithoutSpaces() {
        assertTrue(parse("{\"choices\": [{\"index\": 0, \"text\": \" a\", \"finish_reason\": \"stop\"}]}"));
        assertEquals("stop", chunk.finishReason());
        assertTrue(parse("{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"error\"}]}"));
        assertEquals("error", chunk.finishReason(), "not read as 'abort' by the length of its value");
    }

    @Test
    void errorsInOpenAisAndVllmsShapesAreErrors() {
        assertTrue(parse("{\"error\": {\"message\": \"context too long\", \"type\": \"BadRequestError\", \"code\": 400}}"));
        assertEquals("context too long", chunk.errorMessage());
        assertTrue(parse("{\"object\":\"error\",\"message\":\"engine dead\",\"type\":\"InternalServerError\",\"code\":500}"));
        assertEquals("engine dead", chunk.errorMessage());
        assertTrue(parse("{\"choices\":[{\"text\":\"x\"}],\"error\":null}"));
        assertNull(chunk.errorMessage(), "a null error is no error");
    }

    @Test
    void aUsageChunkWithEmptyChoicesCarriesCountsButNoContent() {
        assertTrue(parse("{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":8}}}"));
        assertEquals(0, chunk.choicesWithContent());
        assertEquals(12, chunk.promptTokens());
        assertEquals(7, chunk.completionTokens());
        assertEquals(8, chunk.cachedPromptTokens());
        assertTrue(parse("{\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}"));
        assertEquals(-1, chunk.completionTokens());
    }

    @Test
    void roleOnlyAndEmptyDeltasCarryNoContentWhileReasoningAndToolCallsDo() {
        assertTrue(parse("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}}]}"));
        assertEquals(0, chunk.choicesWithContent());
        assertTrue(parse("{\"choices\":[{\"delta\":{\"content\":null}}]}"));
        assertEquals(0, chunk.choicesWithContent());
        assertTrue(parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}"));
        assertEquals(1, chunk.choicesWithContent());
        assertEquals("hm", chunk.text().toString());
        assertTrue(parse("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get\",\"arguments\":\"{\\\"city\\\"\"}}]}}]}"));
        assertEquals(1, chunk.choicesWithContent());
        assertEquals("{\"city\"", chunk.text().toString(), "the arguments are generated text");
    }

    @Test
    void interleavedChoicesAreEachCounted() {
        assertTrue(parse("{\"choices\":[{\"index\":1,\"text\":\" b\"},{\"index\":0,\"text\":\" a\"}]}"));
        assertEquals(2, chunk.choicesWithContent());
        assertEquals(" b a", chunk.text().toString());
    }

    @Test
    void escapesAreDecodedAndTheGroundTruthIsKept() {
        assertTrue(parse("{\"choices\":[{\"text\":\"a\\\"b\\n\\u00e9\"}],\"infersim\":{\"time_scale\":10.0}}"));
        assertEquals("a\"b\n\u00e9", chunk.text().toString());
        assertEquals(10.0, chunk.infersim().get("time_scale").asDouble());
    }

    @Test
    void whatIsNotAJsonObjectIsRejectedWithThePayload() {
        assertFalse(parse("{\"choices\":[{\"text\":"));
        assertTrue(chunk.errorMessage().startsWith("malformed JSON"), chunk.errorMessage());
        assertFalse(parse("hello"));
        assertTrue(chunk.errorMessage().contains("hello"), chunk.errorMessage());
    }

    @Test
    void oneParserReadsAStreamOfChunksAndStartsAfreshAfterABadOne() {
        for (int i = 0; i < 3; i++) {
            assertTrue(parse("{\"choices\":[{\"text\":\"t" + i + "\"}]} \r\n"), chunk.errorMessage());
            assertEquals("t" + i, chunk.text().toString());
        }
        assertFalse(parse("{\"choices\":[{\"text\":\"x\"}]} trailing"));
        assertTrue(chunk.errorMessage().startsWith("malformed JSON (text after the object)"), chunk.errorMessage());
        assertFalse(parse("{\"choices\":[{\"text\":\"x\"}], \"usage\": {\"a\": [1, "));
        assertTrue(chunk.errorMessage().startsWith("malformed JSON"), chunk.errorMessage());
        assertTrue(parse("{\"choices\":[{\"text\":\"after\"}],\"usage\":{\"completion_tokens\":4}}"), chunk.errorMessage());
        assertEquals("after", chunk.text().toString());
        assertEquals(4, chunk.completionTokens());
    }
}
