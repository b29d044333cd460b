/**
 * Servers as a user starts them: one replica ({@link dev.infersim.server.fleet.MockServer}), N replicas in one process
 * ({@link dev.infersim.server.fleet.MockFleet}), the routing front door before them ({@link
 * dev.infersim.server.fleet.FrontDoor}) and the JIT warm-up run before the real server. The top of mock-server: nothing
 * in it is used by another server package.
 */
package dev.infersim.server.fleet;
