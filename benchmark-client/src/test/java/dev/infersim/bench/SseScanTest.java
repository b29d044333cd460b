package dev.infersim.bench;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SseScanTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsUsageCountsWithoutParsingJson() {
        byte[] p = b("{\"choices\":[{\"text\":\" a\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\": 7}}");
        assertEquals(7, SseScan.longAfter(p, 0, p.length, SseScan.COMPLETION_TOKENS));
        assertEquals(12, SseScan.longAfter(p, 0, p.length, SseScan.PROMPT_TOKENS));
        byte[] none = b("{\"usage\":null}");
        assertEquals(-1, SseScan.longAfter(none, 0, none.length, SseScan.COMPLETION_TOKENS));
    }

    @Test
    void roleOnlyAndEmptyDeltasCarryNoContent() {
        byte[] role = b("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}");
        byte[] nullContent = b("{\"choices\":[{\"delta\":{\"content\":null}}]}");
        byte[] reasoning = b("{\"choices\":[{\"delta\":{\"reasoning_content\":\"x\"}}]}");
        byte[] content = b("{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}");
        assertEquals(-1, SseScan.nonEmptyStringAfter(role, 0, role.length, SseScan.CONTENT));
        assertEquals(-1, SseScan.nonEmptyStringAfter(nullContent, 0, nullContent.length, SseScan.CONTENT));
        assertEquals(-1, SseScan.nonEmptyStringAfter(reasoning, 0, reasoning.length, SseScan.CONTENT));
        assertTrue(SseScan.nonEmptyStringAfter(content, 0, content.length, SseScan.CONTENT) > 0);
    }

    @Test
    void decodesJsonStringEscapes() {
        byte[] p = b("\"a\\\"b\\\\c\\nd\\u00e9 \u00fc\" rest");
        StringBuilder out = new StringBuilder();
        int end = SseScan.appendString(p, 1, p.length, out);
        assertEquals("a\"b\\c\nd\u00e9 \u00fc", out.toString());
        assertEquals('r', (char) p[end + 1]);
    }

    @Test
    void recognisesDoneWithSurroundingSpace() {
        byte[] p = b("data: [DONE]\r");
        assertTrue(SseScan.equalsTrimmed(p, 5, p.length, SseScan.DONE));
    }
}
