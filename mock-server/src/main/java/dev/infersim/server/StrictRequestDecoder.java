package dev.infersim.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;

import java.util.List;

/**
 * Vert.x's HTTP/1.1 request decoder with two framings refused that it would accept, each answered 400 with the
 * connection closed ({@code HttpApi.invalidRequest}), as RFC 9112 asks:
 * <ul>
 *   <li>both {@code Content-Length} and {@code Transfer-Encoding} (section 6.3: a server may refuse it and must close
 *       the connection; it is the shape of request smuggling, where a proxy and the server disagree on the body);</li>
 *   <li>obsolete line folding, a header line starting with a space or tab (section 5.2: reject with 400), which Netty
 *       joins to the previous header's value.</li>
 * </ul>
 * It also tells its {@link ConnectionGuard} when a request head begins and when it is complete, for the header timeout.
 * The fold check reads each head's bytes once as the decoder consumes them; a head that arrives in the same read as the
 * end of a previous request's body (pipelining) is not checked.
 */
final class StrictRequestDecoder extends VertxHttpRequestDecoder {
    private final ConnectionGuard guard;
    /** Between requests or inside a head: the bytes consumed are a head's. */
    private boolean inHead = true;
    private boolean headStarted;
    private boolean requestLineRead;
    private boolean atLineStart = true;
    private int lineBytes;
    private boolean folded;

    StrictRequestDecoder(HttpServerOptions options, ConnectionGuard guard) {
        super(options);
        this.guard = guard;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (inHead && !headStarted && in.isReadable()) {
            headStarted = true;
            guard.headStarted();
        }
        int from = in.readerIndex();
        int produced = out.size();
        boolean scanning = inHead;
        super.decode(ctx, in, out);
        if (scanning) {
            scanHead(in, from, in.readerIndex());
        }
        for (int i = produced; i < out.size(); i++) {
            Object o = out.get(i);
            if (o instanceof HttpRequest request) {
                inHead = false;
                guard.headRead();
                if (folded) {
                    refuse(request, "obsolete line folding (a header line starting with a space or tab) is not accepted");
                }
            }
            if (o instanceof LastHttpContent) {
                inHead = true;
                headStarted = false;
                requestLineRead = false;
                atLineStart = true;
                lineBytes = 0;
                folded = false;
            }
        }
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        super.handleTransferEncodingChunkedWithContentLength(message);
        refuse(message, "a request with both Content-Length and Transfer-Encoding is not accepted");
    }

    private static void refuse(HttpMessage message, String why) {
        message.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(why)));
    }

    /** Reads head bytes [from, to) line by line up to the blank line that ends the head; notes a folded line. */
    private void scanHead(ByteBuf in, int from, int to) {
        for (int i = from; i < to; i++) {
            byte b = in.getByte(i);
            if (b == '\n') {
                if (requestLineRead && lineBytes == 0) {
                    return; // the blank line: what follows is the body
                }
                requestLineRead |= lineBytes > 0;
                atLineStart = true;
                lineBytes = 0;
            } else if (b != '\r') {
                folded |= atLineStart && requestLineRead && (b == ' ' || b == '\t');
                atLineStart = false;
                lineBytes++;
            }
        }
    }
}
