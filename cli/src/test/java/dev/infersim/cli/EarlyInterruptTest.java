package dev.infersim.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The shutdown hook main installs first, run directly: the JVM's own interrupt cannot be sent in-process. */
class EarlyInterruptTest {

    @Test
    void anInterruptBeforeTheCommandTookOverIsOneLine() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        EarlyInterrupt early = new EarlyInterrupt(new PrintStream(err, true, StandardCharsets.UTF_8));
        early.run();
        early.run();
        assertEquals("infersim: interrupted before the run started; nothing was measured or written\n",
                err.toString(StandardCharsets.UTF_8), "one line, once");
    }

    @Test
    void afterTheHandOverTheHookIsSilent() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        EarlyInterrupt early = new EarlyInterrupt(new PrintStream(err, true, StandardCharsets.UTF_8));
        early.markHandedOver();
        early.run();
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }
}
