package dev.infersim.server.engine;

import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.config.FaultType;

/**
 * The fault one exchange injects, if any, with the settings in force when it arrived. Error faults never reach an
 * exchange (the handler answers them); these act on a response under way: a stream stalls or drops after
 * {@code fault_after_tokens} tokens, or holds its first token back; a whole body is dropped or delayed; or the engine
 * fails the request ({@link FaultType#ENGINE_ERROR}).
 */
public final class ExchangeFault {
    private final FaultType type;
    private final FaultSettings settings;
    private boolean applied;

    public ExchangeFault(FaultType type, FaultSettings settings) {
        this.type = type;
        this.settings = settings;
    }

    /** The exception {@link FaultType#ENGINE_ERROR} throws on the engine thread. */
    static final class Injected extends RuntimeException {
        Injected(int token) {
            super("injected engine fault at token " + token, null, false, false);
        }
    }

    /** Engine thread: throws, as a fault of the engine's own work on this request, once it has produced {@code tokens}. */
    public void failEngineAt(int tokens) {
        if (type == FaultType.ENGINE_ERROR && tokens == settings.afterTokens() + 1) {
            throw new Injected(tokens);
        }
    }

    /** Whether each token must reach the event loop even without a stream: a drop counts them. */
    public boolean countsTokens() {
        return type == FaultType.DISCONNECT;
    }

    /** Non-stream: drop the connection now, mid-generation, as a crashed backend would. */
    public boolean dropsWhole(int emitted, boolean finished) {
        return type == FaultType.DISCONNECT && emitted >= settings.afterTokens() && !finished;
    }

    /** Stream: wall ms to hold the first token back once it exists, or -1. */
    public long firstTokenHoldMs(int emitted) {
        if (type != FaultType.SLOW_FIRST_TOKEN || applied || emitted == 0) {
            return -1;
        }
        applied = true;
        return settings.slowFirstTokenMs();
    }

    /**
     * Stream: whether the fault interrupts before the token after {@code tokensSent}: a stall (hold for
     * {@link #stallMs()}) or a drop ({@link #dropsStream()} from then on).
     */
    public boolean interruptsAt(int tokensSent) {
        if ((type != FaultType.STALL && type != FaultType.DISCONNECT) || applied || tokensSent != settings.afterTokens()) {
            return false;
        }
        applied = true;
        return true;
    }

    public boolean stalls() {
        return type == FaultType.STALL;
    }

    public long stallMs() {
        return settings.stallMs();
    }

    /** Stream: the connection is reset once what was written before the drop point went out. */
    public boolean dropsStream() {
        return type == FaultType.DISCONNECT && applied;
    }

    /** Non-stream: whether the finished body is dropped instead of sent. */
    public boolean dropsBody() {
        return type == FaultType.DISCONNECT;
    }

    /** Non-stream: wall ms the finished body waits (a stall, or the held first token), or -1 to send it now. */
    public long bodyDelayMs() {
        if (type == FaultType.STALL) {
            return settings.stallMs();
        }
        return type == FaultType.SLOW_FIRST_TOKEN ? settings.slowFirstTokenMs() : -1;
    }
}
