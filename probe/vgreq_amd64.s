#include "textflag.h"

// func vgRequest(args *[6]uintptr) uintptr
//
// Valgrind's client request on amd64: the request's address in AX, the
// default result in DX, the "special instruction" preamble (four rotations
// of DI that leave it unchanged) and xchgq %rbx,%rbx. Natively it is a
// no-op and returns 0; under valgrind the tool answers in DX.
TEXT ·vgRequest(SB),NOSPLIT,$0-16
	MOVQ args+0(FP), AX
	MOVQ $0, DX
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x03 // rolq $3, %rdi
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x0d // rolq $13, %rdi
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x3d // rolq $61, %rdi
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x33 // rolq $51, %rdi
	BYTE $0x48; BYTE $0x87; BYTE $0xdb             // xchgq %rbx, %rbx
	MOVQ DX, ret+8(FP)
	RET
