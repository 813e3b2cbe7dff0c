// Reading elements of any mnn dtype from buffers of 32-bit words, by element
// index: float32 and int32 are one word, int64 two (little-endian), bool one
// byte (four to a word). NaN and infinity are tested on the bits, since GLSL
// lets isnan() be optimized away.
#define KIND_F32 0
#define KIND_I32 1
#define KIND_I64 2
#define KIND_BOOL 3

uint byte_at(uint word, uint i) {
    return (word >> ((i & 3u) * 8u)) & 0xFFu;
}

bool bits_nan(uint u) {
    return (u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0u;
}

bool bits_inf(uint u) {
    return (u & 0x7FFFFFFFu) == 0x7F800000u;
}
