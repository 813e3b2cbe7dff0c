/* Declarations-only stand-in for the part of Apple's Foundation that csrc/mnn_metal.m uses,
 * so `clang -fsyntax-only -fobjc-arc` can check that file's C, Objective-C and ARC rules on
 * Linux (tests/test_native_syntax.py). Written from Apple's documented signatures; it proves
 * nothing about the real SDK. Never used for a build. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef unsigned long NSUInteger;
typedef long NSInteger;
typedef signed char BOOL;
typedef const void *CFTypeRef;
#define nil ((id)0)

CFTypeRef CFBridgingRetain(id X);
void CFRelease(CFTypeRef cf);

__attribute__((objc_root_class))
@interface NSObject
+ (instancetype)new;
+ (instancetype)alloc;
- (instancetype)init;
@end

@interface NSString : NSObject
+ (instancetype)stringWithUTF8String:(const char *)s;
+ (instancetype)stringWithFormat:(NSString *)format, ...;
@property(readonly) const char *UTF8String;
@end

@interface NSError : NSObject
@property(readonly, copy) NSString *localizedDescription;
@end

@interface NSDictionary<KeyType, ObjectType> : NSObject
@end

@interface NSMutableDictionary<KeyType, ObjectType> : NSDictionary<KeyType, ObjectType>
+ (instancetype)dictionary;
- (void)setObject:(ObjectType)obj forKeyedSubscript:(KeyType)key;
@end
