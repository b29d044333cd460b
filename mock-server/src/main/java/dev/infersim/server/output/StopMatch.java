package dev.infersim.server.output;

import dev.infersim.server.engine.Choice;

/**
 * Where a stop string ended a choice, as vLLM's stop checker finds it (see {@link Choice#scanForStop}): generation ends
 * at the token that completes the match, and the text is cut where the stop string starts.
 *
 * @param tokens      tokens generated up to and including the one completing the match (the engine's EOS position)
 * @param textLength  characters of output text kept (the stop string and anything after it are dropped)
 * @param stop        the stop string that matched (vLLM's {@code stop_reason})
 */
public record StopMatch(int tokens, int textLength, String stop) {
}
