"""The runtime every generated package carries: ordinary Python, linted, typed and tested here.

A build copies each module below the provenance header into the package (`acpgen.render.OUTPUTS`
says which), so the output stays one self-contained folder with no dependency on acpgen. The
modules import their schema-shaped neighbours (`.connections`, `.interfaces`, `.rpc`) by relative
import: they run only inside a generated package, never from here.
"""
