/* A small stack-machine interpreter: programs are assembled from text, then run by a
 * switch-dispatched loop (a jump table); they compute factorials, Fibonacci numbers, a
 * Collatz record, and primes, calling subroutines through a return stack. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { PUSH, POP, DUP, SWAP, OVER, ADD, SUB, MUL, DIV, MOD, LT, EQ, NOT, JMP, JZ, CALL, RET,
          LOAD, STORE, PRINT, HALT, INC, DEC, ROT, NOPS };
static const char *names[NOPS] = {"push", "pop", "dup", "swap", "over", "add", "sub", "mul", "div",
                                  "mod", "lt", "eq", "not", "jmp", "jz", "call", "ret", "load",
                                  "store", "print", "halt", "inc", "dec", "rot"};

struct insn {
    enum op op;
    int64_t arg;
};

static int assemble(const char *text, struct insn *code, int max) {
    char labels[32][16];
    int label_at[32], nlabels = 0, n = 0;
    char buf[4096];
    for (int pass = 0; pass < 2; pass++) {
        strncpy(buf, text, sizeof buf - 1);
        buf[sizeof buf - 1] = '\0';
        n = 0;
        for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
            size_t len = strlen(tok);
            if (tok[len - 1] == ':') {
                if (pass == 0) {
                    tok[len - 1] = '\0';
                    strcpy(labels[nlabels], tok);
                    label_at[nlabels++] = n;
                }
                continue;
            }
            int op = 0;
            while (op < NOPS && strcmp(names[op], tok)) op++;
            if (op == NOPS) return -1;
            code[n].op = (enum op)op;
            code[n].arg = 0;
            if (op == PUSH || op == JMP || op == JZ || op == CALL || op == LOAD || op == STORE) {
                char *a = strtok(NULL, " \n");
                char *end;
                long long v = strtoll(a, &end, 10);
                if (*end) {
                    v = -1;
                    for (int l = 0; l < nlabels; l++)
                        if (!strcmp(labels[l], a)) v = label_at[l];
                }
                code[n].arg = v;
            }
            if (++n == max) return -1;
        }
    }
    return n;
}

static int64_t steps;

static void run(const struct insn *code, const char *title) {
    int64_t stack[256], mem[64] = {0};
    int rstack[64], sp = 0, rsp = 0, pc = 0;
    printf("%s:", title);
    for (;;) {
        struct insn in = code[pc++];
        steps++;
        switch (in.op) {
        case PUSH: stack[sp++] = in.arg; break;
        case POP: sp--; break;
        case DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case SWAP: { int64_t t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; } break;
        case OVER: stack[sp] = stack[sp - 2]; sp++; break;
        case ROT: { int64_t t = stack[sp - 3]; stack[sp - 3] = stack[sp - 2]; stack[sp - 2] = stack[sp - 1]; stack[sp - 1] = t; } break;
        case ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case DIV: sp--; stack[sp - 1] /= stack[sp]; break;
        case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
        case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
        case EQ: sp--; stack[sp - 1] = stack[sp - 1] == stack[sp]; break;
        case NOT: stack[sp - 1] = !stack[sp - 1]; break;
        case INC: stack[sp - 1]++; break;
        case DEC: stack[sp - 1]--; break;
        case JMP: pc = (int)in.arg; break;
        case JZ: if (!stack[--sp]) pc = (int)in.arg; break;
        case CALL: rstack[rsp++] = pc; pc = (int)in.arg; break;
        case RET: pc = rstack[--rsp]; break;
        case LOAD: stack[sp++] = mem[in.arg]; break;
        case STORE: mem[in.arg] = stack[--sp]; break;
        case PRINT: printf(" %lld", (long long)stack[--sp]); break;
        case HALT: printf("\n"); return;
        default: printf(" bad op\n"); return;
        }
    }
}

int main(void) {
    struct insn code[512];
    const char *factorials =
        "push 1 store 0 push 1 store 1\n"
        "loop: load 0 push 21 lt jz end\n"
        "load 1 load 0 mul dup store 1 print load 0 inc store 0 jmp loop\n"
        "end: halt";
    const char *fibonacci =
        "push 0 push 1 push 40 store 5\n"
        "loop: load 5 jz end over print dup rot add load 5 dec store 5 jmp loop\n"
        "end: halt";
    const char *collatz =
        "push 1 store 0 push 0 store 2\n"
        "outer: load 0 push 30000 lt jz done\n"
        "load 0 call steps dup load 2 lt jz better pop jmp next\n"
        "better: store 2 load 0 store 3\n"
        "next: load 0 inc store 0 jmp outer\n"
        "done: load 3 print load 2 print halt\n"
        "steps: push 0 store 4\n"
        "step: dup push 1 eq not jz finish\n"
        "dup push 2 mod jz even push 3 mul inc jmp count\n"
        "even: push 2 div\n"
        "count: load 4 inc store 4 jmp step\n"
        "finish: pop load 4 ret";
    const char *primes =
        "push 2 store 0 push 0 store 1\n"
        "outer: load 0 push 200 lt jz done push 2 store 2\n"
        "inner: load 2 load 2 mul load 0 swap lt jz check\n"
        "load 0 print load 1 inc store 1 jmp next\n"
        "check: load 0 load 2 mod jz next load 2 inc store 2 jmp inner\n"
        "next: load 0 inc store 0 jmp outer\n"
        "done: load 1 print halt";
    const char *programs[] = {factorials, fibonacci, collatz, primes};
    const char *titles[] = {"factorials", "fibonacci", "collatz record below 30000", "primes below 200"};
    for (int i = 0; i < 4; i++) {
        int n = assemble(programs[i], code, 512);
        if (n < 0) {
            printf("%s: assembly failed\n", titles[i]);
            return 1;
        }
        run(code, titles[i]);
    }
    printf("%lld instructions executed\n", (long long)steps);
    return 0;
}
