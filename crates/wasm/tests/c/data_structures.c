/* Heap-allocated data structures: an AVL tree with insertions and deletions, a growable
 * vector (realloc), a doubly linked list with splicing, and a chained hash map that
 * rehashes; invariants are checked and summaries printed; everything is freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 2463534242u;
static uint32_t rnd(void) {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
}

struct node {
    int key, height;
    struct node *left, *right;
};

static int height(struct node *n) { return n ? n->height : 0; }
static int max(int a, int b) { return a > b ? a : b; }
static void update(struct node *n) { n->height = 1 + max(height(n->left), height(n->right)); }

static struct node *rotate_right(struct node *y) {
    struct node *x = y->left;
    y->left = x->right;
    x->right = y;
    update(y);
    update(x);
    return x;
}

static struct node *rotate_left(struct node *x) {
    struct node *y = x->right;
    x->right = y->left;
    y->left = x;
    update(x);
    update(y);
    return y;
}

static struct node *balance(struct node *n) {
    update(n);
    int b = height(n->left) - height(n->right);
    if (b > 1) {
        if (height(n->left->left) < height(n->left->right)) n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (b < -1) {
        if (height(n->right->right) < height(n->right->left)) n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

static struct node *insert(struct node *n, int key) {
    if (!n) {
        n = calloc(1, sizeof *n);
        n->key = key;
        n->height = 1;
        return n;
    }
    if (key < n->key) n->left = insert(n->left, key);
    else if (key > n->key) n->right = insert(n->right, key);
    else return n;
    return balance(n);
}

static struct node *remove_min(struct node *n, struct node **min) {
    if (!n->left) {
        *min = n;
        return n->right;
    }
    n->left = remove_min(n->left, min);
    return balance(n);
}

static struct node *erase(struct node *n, int key) {
    if (!n) return NULL;
    if (key < n->key) n->left = erase(n->left, key);
    else if (key > n->key) n->right = erase(n->right, key);
    else {
        struct node *l = n->left, *r = n->right;
        free(n);
        if (!r) return l;
        struct node *min;
        r = remove_min(r, &min);
        min->left = l;
        min->right = r;
        return balance(min);
    }
    return balance(n);
}

static int check(struct node *n, long lo, long hi, int *count, long long *sum) {
    if (!n) return 1;
    if (n->key <= lo || n->key >= hi) return 0;
    int b = height(n->left) - height(n->right);
    if (b < -1 || b > 1 || n->height != 1 + max(height(n->left), height(n->right))) return 0;
    ++*count;
    *sum += n->key;
    return check(n->left, lo, n->key, count, sum) && check(n->right, n->key, hi, count, sum);
}

static void free_tree(struct node *n) {
    if (!n) return;
    free_tree(n->left);
    free_tree(n->right);
    free(n);
}

struct item {
    int value;
    struct item *prev, *next;
};

struct entry {
    char *key;
    int value;
    struct entry *next;
};

struct map {
    struct entry **buckets;
    size_t size, count, rehashes;
};

static size_t str_hash(const char *s) {
    size_t h = 0;
    while (*s) h = h * 131 + (unsigned char)*s++;
    return h;
}

static void map_put(struct map *m, const char *key, int value) {
    size_t h = str_hash(key) % m->size;
    for (struct entry *e = m->buckets[h]; e; e = e->next)
        if (!strcmp(e->key, key)) {
            e->value += value;
            return;
        }
    if (m->count + 1 > m->size * 3 / 4) {
        size_t size = m->size * 2;
        struct entry **b = calloc(size, sizeof *b);
        for (size_t i = 0; i < m->size; i++)
            for (struct entry *e = m->buckets[i], *next; e; e = next) {
                next = e->next;
                size_t j = str_hash(e->key) % size;
                e->next = b[j];
                b[j] = e;
            }
        free(m->buckets);
        m->buckets = b;
        m->size = size;
        m->rehashes++;
        h = str_hash(key) % m->size;
    }
    struct entry *e = malloc(sizeof *e);
    e->key = strdup(key);
    e->value = value;
    e->next = m->buckets[h];
    m->buckets[h] = e;
    m->count++;
}

int main(void) {
    struct node *root = NULL;
    for (int i = 0; i < 50000; i++) root = insert(root, (int)(rnd() % 100000));
    int count = 0;
    long long sum = 0;
    int ok = check(root, -1, 100000, &count, &sum);
    printf("avl: %d keys, height %d, sum %lld, valid %s\n", count, height(root), sum, ok ? "yes" : "no");
    for (int k = 0; k < 100000; k += 3) root = erase(root, k);
    count = 0;
    sum = 0;
    ok = check(root, -1, 100000, &count, &sum);
    printf("avl after erasing multiples of 3: %d keys, height %d, sum %lld, valid %s\n", count,
           height(root), sum, ok ? "yes" : "no");
    free_tree(root);

    int *vec = NULL;
    size_t len = 0, cap = 0, grows = 0;
    for (int i = 0; i < 300000; i++) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4;
            vec = realloc(vec, cap * sizeof *vec);
            grows++;
        }
        vec[len++] = i ^ (i >> 3);
    }
    long long vsum = 0;
    for (size_t i = 0; i < len; i++) vsum += vec[i];
    printf("vector: %zu items, capacity %zu after %zu grows, sum %lld\n", len, cap, grows, vsum);
    free(vec);

    struct item head = {0, &head, &head};
    for (int i = 1; i <= 1000; i++) {
        struct item *it = malloc(sizeof *it);
        it->value = i;
        struct item *at = (i % 3 == 0) ? head.next : &head; /* every third at the front */
        it->prev = (i % 3 == 0) ? &head : head.prev;
        it->next = (i % 3 == 0) ? at : &head;
        it->prev->next = it;
        it->next->prev = it;
    }
    for (struct item *it = head.next, *next; it != &head; it = next) {
        next = it->next;
        if (it->value % 5 == 0) {
            it->prev->next = it->next;
            it->next->prev = it->prev;
            free(it);
        }
    }
    long weighted = 0;
    int position = 0, n_items = 0;
    for (struct item *it = head.next; it != &head; it = it->next) weighted += (long)++position * it->value, n_items++;
    printf("list: %d items, first %d, last %d, weighted sum %ld\n", n_items, head.next->value,
           head.prev->value, weighted);
    for (struct item *it = head.next, *next; it != &head; it = next) {
        next = it->next;
        free(it);
    }

    struct map m = {calloc(8, sizeof(struct entry *)), 8, 0, 0};
    char key[16];
    for (int i = 0; i < 20000; i++) {
        snprintf(key, sizeof key, "k%u", rnd() % 5000);
        map_put(&m, key, i % 7);
    }
    long total = 0;
    size_t longest_chain = 0;
    for (size_t i = 0; i < m.size; i++) {
        size_t chain = 0;
        for (struct entry *e = m.buckets[i]; e; e = e->next) total += e->value, chain++;
        if (chain > longest_chain) longest_chain = chain;
    }
    printf("map: %zu keys in %zu buckets after %zu rehashes, longest chain %zu, total %ld\n", m.count,
           m.size, m.rehashes, longest_chain, total);
    for (size_t i = 0; i < m.size; i++)
        for (struct entry *e = m.buckets[i], *next; e; e = next) {
            next = e->next;
            free(e->key);
            free(e);
        }
    free(m.buckets);
    return 0;
}
