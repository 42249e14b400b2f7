/* Floating point: Newton's square roots against sqrt, Simpson's rule, a series for pi, the
 * solution of a linear system by Gaussian elimination with partial pivoting, libm
 * functions, float (single precision) accumulation, formatting with %f %e %g and %a, and an
 * ASCII Mandelbrot set. */
#include <math.h>
#include <stdio.h>

static double newton_sqrt(double x) {
    double r = x > 1 ? x / 2 : 1;
    for (int i = 0; i < 60; i++) r = 0.5 * (r + x / r);
    return r;
}

static double f(double x) { return x * x * x - 2 * x + 1; }

static double simpson(double a, double b, int n) {
    double h = (b - a) / n, s = f(a) + f(b);
    for (int i = 1; i < n; i++) s += f(a + i * h) * (i % 2 ? 4 : 2);
    return s * h / 3;
}

int main(void) {
    for (int i = 2; i <= 50; i += 12)
        printf("sqrt(%d): newton %.15f, libm %.15f, equal %s\n", i, newton_sqrt(i), sqrt(i),
               newton_sqrt(i) == sqrt(i) ? "yes" : "no");
    printf("simpson x^3-2x+1 on [0,2]: %.12f\n", simpson(0, 2, 1000));
    double pi = 0;
    for (int k = 0; k < 1000000; k++) pi += (k % 2 ? -4.0 : 4.0) / (2 * k + 1);
    printf("leibniz pi: %.10f (error %.3e)\n", pi, fabs(pi - M_PI));

    enum { N = 5 };
    double a[N][N + 1];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) a[i][j] = 1.0 / (i + j + 1) + (i == j ? 1.0 : 0.0);
        a[i][N] = i + 1;
    }
    for (int c = 0; c < N; c++) {
        int p = c;
        for (int r = c + 1; r < N; r++)
            if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
        for (int j = 0; j <= N; j++) {
            double t = a[c][j];
            a[c][j] = a[p][j];
            a[p][j] = t;
        }
        for (int r = 0; r < N; r++) {
            if (r == c) continue;
            double m = a[r][c] / a[c][c];
            for (int j = c; j <= N; j++) a[r][j] -= m * a[c][j];
        }
    }
    for (int i = 0; i < N; i++) printf("x%d = %.12f\n", i, a[i][N] / a[i][i]);

    double xs[] = {0.5, 1.0, 2.0, 10.0};
    for (int i = 0; i < 4; i++) {
        double x = xs[i];
        printf("x=%g: exp %.9g log %.9g sin %.9g cos %.9g atan %.9g pow(x,1.5) %.9g\n", x, exp(x), log(x),
               sin(x), cos(x), atan(x), pow(x, 1.5));
    }
    printf("floor/ceil/round/trunc of -2.5: %g %g %g %g\n", floor(-2.5), ceil(-2.5), round(-2.5), trunc(-2.5));
    printf("fmod(10.5, 3) = %g, remainder = %g, hypot(3,4) = %g\n", fmod(10.5, 3), remainder(10.5, 3), hypot(3, 4));
    printf("inf %f, -inf %f, nan is nan %d, 1/-0 %f\n", INFINITY, -INFINITY, isnan(NAN), 1 / -0.0);
    float acc = 0;
    for (int i = 1; i <= 100000; i++) acc += 1.0f / (float)i;
    printf("float harmonic(100000) = %.7f\n", acc);
    printf("formats: %e | %.3e | %g | %g | %g | %a\n", 123456.789, 0.000123456, 1e-10, 123456789.0, 0.1, 1.0);
    printf("conversions: %d %d %u %lld\n", (int)-3.99, (int)3.99, (unsigned)4e9, (long long)-1e18);

    for (int y = -12; y <= 12; y++) {
        char row[65];
        for (int x = 0; x < 64; x++) {
            double cr = -2.2 + x * 3.0 / 64, ci = y * 0.1, zr = 0, zi = 0;
            int it = 0;
            while (it < 200 && zr * zr + zi * zi < 4) {
                double t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                it++;
            }
            row[x] = " .:-=+*#%@"[it == 200 ? 9 : it % 9];
        }
        row[64] = '\0';
        printf("%s\n", row);
    }
    return 0;
}
