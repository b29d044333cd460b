package dev.infersim.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;

import java.util.List;

/**
 * Vert.x's HTTP/1.1 request decoder with the framings refused that it would accept, each answered 400 with the
 * connection closed ({@code HttpApi.invalidRequest}), as RFC 9112 (https://www.rfc-editor.org/rfc/rfc9112) asks:
 * <ul>
 *   <li>{@code Transfer-Encoding} beside {@code Content-Length} (section 6.3: a server may refuse it and must close
 *       the connection; it is the shape of request smuggling, where a proxy and the server disagree on the body), in an
 *       HTTP/1.0 request (section 6.1: its framing is faulty) or without {@code chunked} as its final coding (section
 *       6.3: the body's length cannot be determined);</li>
 *   <li>obsolete line folding, a header line starting with a space or tab (section 5.2: reject with 400), which Netty
 *       joins to the previous header's value.</li>
 * </ul>
 * Every request of a connection is checked, pipelined ones included: Netty's decoder consumes one head, one piece of a
 * body or one trailer section per {@code decode} call, never two, so the bytes a call consumes between one request's
 * end and the next one's head are that head's, whatever the reads that brought them. Once a request is refused (here
 * or by Netty), nothing after it is decoded: its body's framing cannot be trusted, so what follows it in the same write
 * (a pipelined request, or one smuggled in a body) is dropped, never served, and the connection closes after the 400.
 * It also tells its {@link ConnectionGuard} when a request head begins and when it is complete, for the header timeout.
 */
public final class StrictRequestDecoder extends VertxHttpRequestDecoder {
    private final ConnectionGuard guard;
    /** Between requests or inside a head: the bytes consumed are a head's. */
    private boolean inHead = true;
    private boolean headStarted;
    private boolean requestLineRead;
    private boolean atLineStart = true;
    private int lineBytes;
    private boolean folded;
    /** A request was refused: every byte after it is dropped. */
    private boolean refused;

    StrictRequestDecoder(HttpServerOptions options, ConnectionGuard guard) {
        super(options);
        this.guard = guard;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (refused) {
            in.skipBytes(in.readableBytes());
            return;
        }
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
                } else if (request.decoderResult().isSuccess()) {
                    refuseFaultyTransferEncoding(request);
                }
                if (request.decoderResult().isFailure()) {
                    dropAfter(out, i, in);
                    return;
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

    /** At the channel's end too, nothing after a refused request (not even the end of its body) is passed on. */
    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (refused) {
            in.skipBytes(in.readableBytes());
            return;
        }
        super.decodeLast(ctx, in, out);
    }

    /** Keeps the refused request {@code out[index]} and nothing decoded or still unread after it. */
    private void dropAfter(List<Object> out, int index, ByteBuf in) {
        refused = true;
        while (out.size() > index + 1) {
            ReferenceCountUtil.release(out.remove(out.size() - 1));
        }
        in.skipBytes(in.readableBytes());
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        super.handleTransferEncodingChunkedWithContentLength(message);
        refuse(message, "a request with both Content-Length and Transfer-Encoding is not accepted");
    }

    /**
     * Refuses a Transfer-Encoding that Netty would frame by guesswork: on HTTP/1.0 it decodes chunks anyway, and a
     * final coding other than chunked it reads as an empty body followed by a next request made of the body's bytes.
     */
    private static void refuseFaultyTransferEncoding(HttpRequest request) {
        List<String> codings = request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (codings.isEmpty()) {
            return;
        }
        if (request.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            refuse(request, "a request with both Content-Length and Transfer-Encoding is not accepted");
        } else if (!request.protocolVersion().equals(HttpVersion.HTTP_1_1)) {
            refuse(request, "Transfer-Encoding is not accepted in an HTTP/1.0 request");
        } else if (!finalCodingIsChunked(codings.get(codings.size() - 1))) {
            refuse(request, "a Transfer-Encoding whose final coding is not chunked is not accepted");
        }
    }

    private static boolean finalCodingIsChunked(String lastHeader) {
        int comma = lastHeader.lastIndexOf(',');
        return lastHeader.substring(comma + 1).trim().equalsIgnoreCase(HttpHeaderValues.CHUNKED.toString());
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
