/** infersim cli. */
package dev.infersim.cli;
