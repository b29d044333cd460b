package dev.infersim.bench.run;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SseDecoderTest {

    private final List<String> events = new ArrayList<>();
    private final SseDecoder decoder = new SseDecoder((error, data, length, nanos) ->
            events.add((error ? "error:" : "") + new String(data, 0, length, StandardCharsets.UTF_8) + "@" + nanos));

    private void feed(String s, long nanos) {
        decoder.feed(Buffer.buffer(s.getBytes(StandardCharsets.UTF_8)), nanos);
    }

    @Test
    void linesEndInLfCrlfOrALoneCrAndTheSpaceAfterTheColonIsOptional() {
        feed("data: a\n\ndata:b\r\n\r\ndata: c\r\rdata:  d\n\n", 1);
        assertEquals(List.of("a@1", "b@1", "c@1", " d@1"), events, "only the first space after the colon goes");
    }

    @Test
    void commentsIdsAndRetriesAreReadPastAndMultiLineDataIsJoinedWithLf() {
        feed(": ping\n\nid: 7\nretry: 100\ndata: {\"a\":\ndata: 1}\n\n", 1);
        assertEquals(List.of("{\"a\":\n1}@1"), events, "a comment alone dispatches nothing");
    }

    @Test
    void anErrorEventIsMarkedAndTheTypeResetsAfterIt() {
        feed("event: error\ndata: {\"error\":\"boom\"}\n\ndata: x\n\n", 1);
        assertEquals(List.of("error:{\"error\":\"boom\"}@1", "x@1"), events);
    }

    @Test
    void anEventSplitOverReadsTakesTheTimeOfTheReadThatCompletesIt() {
        feed("da", 1);
        feed("ta: hel", 2);
        feed("lo\r", 3);
        feed("\n", 4);
        feed("\ndata: next\n", 5);
        assertEquals(List.of("hello@5"), events, "the LF of the split CRLF is no empty line: the event ends at read 5");
        decoder.end(6);
        assertEquals(List.of("hello@5", "next@6"), events, "the last event without its empty line still counts");
    }

    @Test
    void aByteOrderMarkAtTheStartIsSkipped() {
        feed("\uFEFFdata: a\n\n", 1);
        assertEquals(List.of("a@1"), events);
    }

    @Test
    void aByteOrderMarkSplitAcrossReadsIsStillSkipped() {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        decoder.feed(Buffer.buffer(new byte[] {bom[0]}), 1);
        decoder.feed(Buffer.buffer(new byte[] {bom[1], bom[2]}).appendString("event: error\ndata: x\n\n"), 2);
        assertEquals(List.of("error:x@2"), events, "found by SseReaderFuzzTest");
    }
}
