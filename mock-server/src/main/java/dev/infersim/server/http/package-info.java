/**
 * The HTTP/1.1 connections every listener shares, a replica's API and the front door alike: strict framing ({@link
 * dev.infersim.server.http.StrictRequestDecoder}), per-connection timeouts, the process's connection budget, logging
 * that cannot throw on a network thread, and the writer of bodies too large for an event loop. Knows no route; uses
 * {@code json} and {@code config}.
 */
package dev.infersim.server.http;
